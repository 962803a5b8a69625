"""Where a sweep's runs and progress come from: the one place that knows the store's sweep views.

Membership and progress are read from the `sweep_cells` and `sweeps` views of the contract in
docs/internals.md. Stores written before those views existed (or by `db.RunWriter` alone) still work:
their runs are grouped by `runs.sweep`, with `lr` from the `lr` config column.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from analysis.errors import AnalysisError
from harness.config.base import closest

FINISHED = ("completed", "diverged")  # results; every other status is work still to do or to retry
UNFINISHED = ("pending", "running", "interrupted")  # a sweep with any of these is still running


def quote(text: str) -> str:
    """`text` as a SQL string literal (sweep names are user strings)."""
    return "'" + text.replace("'", "''") + "'"


def _has_view(con, name: str) -> bool:
    return con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [name]).fetchone()[0] > 0


def _runs_columns(con) -> list[str]:
    return [row[0] for row in con.execute("DESCRIBE runs").fetchall()]


def membership_sql(con, sweep: str) -> str:
    """A SELECT of one row per run of `sweep`: sweep, arm, lr, seed, trial, then every `runs` column."""
    if _has_view(con, "sweep_cells"):
        return (
            "SELECT c.sweep, c.arm, c.lr, c.seed, c.trial, r.* EXCLUDE (sweep, arm, seed"
            + (", lr" if "lr" in _runs_columns(con) else "")
            + f") FROM sweep_cells c JOIN runs r USING (run_id) WHERE c.sweep = {quote(sweep)}"
        )
    lr = "lr" if "lr" in _runs_columns(con) else "NULL::DOUBLE AS lr"
    return (
        f"SELECT sweep, arm, {lr}, seed, NULL::BIGINT AS trial, * EXCLUDE (sweep, arm, seed"
        + (", lr" if lr == "lr" else "")
        + f") FROM runs WHERE sweep = {quote(sweep)}"
    )


@dataclass(frozen=True)
class SweepInfo:
    """What a sweep asked and how far it got."""

    name: str
    question: str | None
    baseline: str | None
    axes: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # cells (or runs) by status

    @property
    def n_cells(self) -> int:
        return sum(self.counts.values())

    @property
    def n_finished(self) -> int:
        return sum(self.counts.get(status, 0) for status in FINISHED)

    @property
    def running(self) -> bool:
        """The contract's definition: any cell pending, running or interrupted."""
        return any(self.counts.get(status, 0) for status in UNFINISHED)

    def progress(self) -> str:
        """'12 of 24 cells; partial' while running, '24 of 24 cells' (plus failures) when done."""
        text = f"{self.n_finished} of {self.n_cells} cells"
        failed = self.counts.get("failed", 0) + self.counts.get("crashed", 0)
        if failed:
            text += f" ({failed} failed or crashed)"
        return text + ("; partial" if self.running else "")


def _sweep_names(con) -> list[str]:
    view = "sweeps" if _has_view(con, "sweeps") else "runs"
    return [row[0] for row in con.execute(f"SELECT DISTINCT sweep FROM {view} WHERE sweep IS NOT NULL").fetchall()]


def sweep_info(con, sweep: str) -> SweepInfo:
    """The sweep's question, baseline, axes and cell counts; AnalysisError naming the closest sweep when unknown."""
    names = _sweep_names(con)
    if sweep not in names:
        hint = closest(sweep, names)
        known = f"did you mean {hint!r}?" if hint else f"known sweeps: {', '.join(map(repr, sorted(names))) or 'none'}."
        raise AnalysisError(f"no sweep named {sweep!r} in the results store; {known}")
    if not _has_view(con, "sweeps"):
        counts = dict(con.execute("SELECT status, count(*) FROM runs WHERE sweep = ? GROUP BY status", [sweep]).fetchall())
        return SweepInfo(sweep, None, None, [], counts)
    question, baseline, axes = con.execute("SELECT question, baseline, axes FROM sweeps WHERE sweep = ?", [sweep]).fetchone()
    counts = dict(con.execute("SELECT status, count(*) FROM sweep_cells WHERE sweep = ? GROUP BY status", [sweep]).fetchall())
    return SweepInfo(sweep, question, baseline, json.loads(axes) if axes else [], counts)
