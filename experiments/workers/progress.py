"""Where a sweep stands, read from the results store and the claims only (so `harness sweep --status` shows
a sweep that runs elsewhere exactly as its own live display does)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import db
from db.catalog import run_problems
from experiments.workers.claims import BeatWatcher, ClaimInfo, current_claim
from experiments.workers.options import DEFAULT_STALE_AFTER


@dataclass(frozen=True)
class CellRef:
    """The plan's view of a cell: enough to find it in the store and to name it."""

    index: int | None  # the cell, trial or confirmation number; None when the row has none
    run_id: str
    label: str


@dataclass
class SweepProgress:
    """Counts of the plan's cells by state, and the live claims of the running ones."""

    total: int
    completed: int = 0
    diverged: int = 0
    failed: int = 0
    running: list[tuple[CellRef, ClaimInfo]] = field(default_factory=list)
    failed_cells: list[CellRef] = field(default_factory=list)
    unfinished: list[CellRef] = field(default_factory=list)  # every cell without a result, running or not
    damaged: list[tuple[CellRef, str]] = field(default_factory=list)  # (cell, its run's damaged shard)

    @property
    def done(self) -> int:
        return self.completed + self.diverged + self.failed

    @property
    def left(self) -> int:
        return self.total - self.done - len(self.running) - len(self.damaged)


def cell_refs(plan_table) -> list[CellRef]:
    """CellRefs of a stored plan (`db.read_plan`); a plan written before confirmation cells has no `confirms`."""
    from experiments.plan.cell import cell_label

    rows = plan_table.select([c for c in ("cell", "run_id", "arm", "lr", "seed", "trial", "confirms")
                              if c in plan_table.column_names]).to_pylist()
    return [CellRef(next((i for i in (r["cell"], r["trial"], r.get("confirms")) if i is not None), None), r["run_id"],
                    cell_label(r["arm"], r["lr"], r["seed"], r["trial"], r.get("confirms")))
            for r in rows]


def stored_cells(results_dir: Path, sweep: str) -> tuple[list[CellRef], int]:
    """(the sweep's cells so far: plan cells, the trials started and the confirmation cells recorded, the
    number it will have in all: for a search, each study's trials plus its confirmation seeds)."""
    import pyarrow as pa

    meta, tables = db.read_sweep(results_dir, sweep)  # DbError: no such sweep; StoreDamage: a damaged plan file
    refs = cell_refs(pa.concat_tables(tables, promote_options="default"))  # older files lack `confirms`: NULL
    studies = meta.get("studies")
    expected = len(refs) if not studies else sum(meta["trials"] + study.get("confirm_seeds", 0) for study in studies)
    return refs, expected


class ProgressReader:
    """Reads a sweep's progress; finished cells are remembered (a result is final, docs/internals.md), so
    polling costs only the unfinished ones. A search's cells (its trials) appear as they start, so they are
    listed again at each read. A cell counts as running while its claim is live as this reader watches it, and as
    damaged while a shard of its run fails its check (db/validate.py; a `stat` per shard once checked)."""

    def __init__(self, results_dir: Path, sweep: str, retries: int, stale_after: float = DEFAULT_STALE_AFTER) -> None:
        self.results_dir, self.sweep, self.retries = Path(results_dir), sweep, retries
        self.watcher = BeatWatcher(stale_after)
        self.cells, self.total = stored_cells(self.results_dir, sweep)
        self._final: dict[str, str] = {}

    def final_status(self, run_id: str) -> str | None:
        """completed / diverged / failed (past its retries) once the cell needs no more work, else None."""
        if run_id in self._final:
            return self._final[run_id]
        state = db.run_state(self.results_dir, run_id)
        status = state.result or ("failed" if state.failures > self.retries else None)
        if status is not None:
            self._final[run_id] = status
        return status

    def damage(self, run_id: str) -> str | None:
        """'path (what is wrong)' of the run's first damaged shard, path relative to the store; None if none."""
        if run_id in self._final:
            return None  # checked when its result was first read
        problems = run_problems(self.results_dir, run_id)
        return next((f"{os.path.relpath(path, os.path.abspath(self.results_dir))} ({problem})"
                     for path, problem in problems.items()), None)

    def read(self) -> SweepProgress:
        if len(self.cells) < self.total:
            self.cells, self.total = stored_cells(self.results_dir, self.sweep)
        progress = SweepProgress(self.total)
        for cell in self.cells:
            damage = self.damage(cell.run_id)
            if damage is not None:
                progress.damaged.append((cell, damage))
                progress.unfinished.append(cell)
                continue
            status = self.final_status(cell.run_id)
            if status is None:
                progress.unfinished.append(cell)
                claim = current_claim(self.results_dir, cell.run_id)
                if claim is not None and not self.watcher.stale(claim):
                    progress.running.append((cell, claim))
                continue
            status = "completed" if status == "pruned" else status  # a pruned trial is a finished result
            setattr(progress, status, getattr(progress, status) + 1)
            if status == "failed":
                progress.failed_cells.append(cell)
        return progress


# `harness sweep`'s exit codes besides 0 (every cell has a result), 2 (bad input) and 128 + N (signal N).
EXIT_FAILED = 1  # every cell is finished, but some failed past their retries
EXIT_CELLS_LEFT = 3  # the workers ended with cells that have no result


def exit_code(progress: SweepProgress) -> int:
    """The sweep's exit code from one read of the store after its workers ended."""
    if progress.done < progress.total:
        return EXIT_CELLS_LEFT
    return EXIT_FAILED if progress.failed else 0


def left_lines(progress: SweepProgress, limit: int = 20) -> list[str]:
    """One line per cell without a result (at most `limit`, then a count), for the closing output."""
    lines = [f"  left: cell {c.index} {c.label} ({c.run_id})" for c in progress.unfinished[:limit]]
    if len(progress.unfinished) > limit:
        lines.append(f"  … and {len(progress.unfinished) - limit} more")
    not_started = progress.total - progress.done - len(progress.unfinished)
    if not_started > 0:
        lines.append(f"  {not_started} search cells (trials or confirmations) not started yet")
    return lines


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def render(sweep: str, progress: SweepProgress, elapsed: float | None = None, eta: float | None = None) -> list[str]:
    """The display's lines: one summary line, then one per running cell (worker, cell, step)."""
    timing = ""
    if elapsed is not None:
        timing += f" · elapsed {_duration(elapsed)}"
    if eta is not None:
        timing += f" · ETA {_duration(eta)}"
    damaged = f" · {len(progress.damaged)} damaged" if progress.damaged else ""
    lines = [
        f"sweep {sweep}: {progress.done}/{progress.total} done ({progress.completed} completed, {progress.diverged} "
        f"diverged, {progress.failed} failed) · {len(progress.running)} running{damaged} · {progress.left} left"
        f"{timing}"
    ]
    for cell, claim in sorted(progress.running, key=lambda item: item[1].worker):
        step = f"step {claim.step}/{claim.steps}" if claim.step is not None else "starting"
        lines.append(f"  {claim.worker or claim.host}: cell {cell.index} {cell.label}  {step}")
    lines += [f"  damaged: cell {cell.index} {cell.label} ({cell.run_id}): {where}; `harness db check --repair` moves "
              "the run aside, and the next `harness sweep` trains it again" for cell, where in progress.damaged]
    return lines
