"""Where a sweep's runs and progress come from: the `sweep_cells` and `sweeps` views (docs/internals.md).

Membership lives in `sweep_cells`, so a run adopted from another sweep counts here too; runs written with
`db.RunWriter` alone form a sweep under their own sweep, arm and seed labels, with `lr` from their config.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from analysis.errors import AnalysisError
from db.sql import quote_literal
from harness.config.base import closest

FINISHED = ("completed", "diverged")  # results; every other status is work still to do or to retry
# Counts of the `sweeps` view. A sweep is running while any cell waits (pending, interrupted, or crashed and so
# to be resumed by the next claimant; the view counts all three as `pending`) or runs.
COUNTS = ("completed", "diverged", "failed", "running", "pending")
UNFINISHED = ("running", "pending")


def membership_sql(con, sweep: str) -> str:
    """A SELECT of one row per run of `sweep`: sweep, arm, lr, seed, trial, then every `runs` column."""
    runs_columns = {row[0] for row in con.execute("DESCRIBE runs").fetchall()}
    shadowed = ", ".join(c for c in ("sweep", "arm", "seed", "lr") if c in runs_columns)
    return (
        f"SELECT c.sweep, c.arm, c.lr, c.seed, c.trial, r.* EXCLUDE ({shadowed}) "
        f"FROM sweep_cells c JOIN runs r USING (run_id) WHERE c.sweep = {quote_literal(sweep)}"
    )


@dataclass(frozen=True)
class SweepInfo:
    """What a sweep asked and how far it got."""

    name: str
    question: str | None
    baseline: str | None
    axes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # cells by the `sweeps` view's COUNTS

    @property
    def n_cells(self) -> int:
        return sum(self.counts.values())

    @property
    def n_finished(self) -> int:
        return sum(self.counts.get(status, 0) for status in FINISHED)

    @property
    def running(self) -> bool:
        """Any cell still waiting or running."""
        return any(self.counts.get(status, 0) for status in UNFINISHED)

    def progress(self) -> str:
        """'12 of 24 cells; partial' while running, '24 of 24 cells' (plus failures) when done."""
        text = f"{self.n_finished} of {self.n_cells} cells"
        if self.counts.get("failed"):
            text += f" ({self.counts['failed']} failed)"
        return text + ("; partial" if self.running else "")


def sweep_info(con, sweep: str) -> SweepInfo:
    """The sweep's question, baseline, axes and cell counts; AnalysisError naming the closest sweep when unknown."""
    found = con.execute(f"SELECT question, baseline, axes, {', '.join(COUNTS)} FROM sweeps WHERE sweep = ?", [sweep]).fetchone()
    if found is None:
        names = [row[0] for row in con.execute("SELECT sweep FROM sweeps").fetchall()]
        hint = closest(sweep, names)
        known = f"did you mean {hint!r}?" if hint else f"known sweeps: {', '.join(map(repr, names)) or 'none'}."
        raise AnalysisError(f"no sweep named {sweep!r} in the results store; {known}")
    question, baseline, axes, *counts = found
    return SweepInfo(sweep, question, baseline, json.loads(axes) if axes else [], dict(zip(COUNTS, counts)))
