"""Reading sweep plans back, each file checked before it is believed (db/validate.py).

A sweep is its description (`sweep.json`), its plan (`cells.parquet`, as many rows as the description says) and a
search's cell files (`trials/`). If one of them is damaged the sweep cannot be shown as it is: a reader that needs
it gets `StoreDamage` naming the file (one line and exit 2 on the command line); the views leave the sweep out with
a warning naming the file, rather than show its runs as a sweep of another shape (cells missing, baseline unknown).
"""

from __future__ import annotations

import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from db.errors import CorruptShardWarning, DbError, StoreDamage
from db.sweeps import CELLS_FILE, HISTORY_DIR, SWEEP_FILE, SWEEPS_DIR, TRIALS_DIR, sweep_dir
from db.validate import meta_problem, plan_problem

REPAIR = "`harness db check --repair` moves the sweep's plan aside; launching the sweep again writes it anew"
REPLACING_S = 0.5  # how long a plan that looks half replaced by a launch is read again before it is called damaged


@dataclass(frozen=True)
class Damaged:
    """A file of a sweep's plan that cannot be believed, and why."""

    path: Path
    sweep: str
    problem: str

    def error(self) -> StoreDamage:
        return StoreDamage(f"sweep {self.sweep!r} cannot be read: {self.path} is damaged ({self.problem}); {REPAIR}.",
                           (str(self.path),))


@dataclass
class SweepFiles:
    """The readable plans of a store: their cell files, their descriptions, and every damaged file by sweep."""

    plans: list[str] = field(default_factory=list)  # cells.parquet and trial files of the readable sweeps
    records: list[dict[str, Any]] = field(default_factory=list)  # their sweep.json records
    damaged: list[Damaged] = field(default_factory=list)  # the first damaged file of each sweep left out


def _stamps(folder: Path) -> list[tuple | None]:
    """(inode, size, mtime_ns) of the description and the plan, None for one that is not there."""
    found: list[tuple | None] = []
    for path in (folder / SWEEP_FILE, folder / CELLS_FILE):
        try:
            stat = path.stat()
        except FileNotFoundError:
            found.append(None)
            continue
        found.append((stat.st_ino, stat.st_size, stat.st_mtime_ns))
    return found


def _check_once(folder: Path, sweep: str) -> tuple[dict, list[Path]] | Damaged:
    meta, cells = folder / SWEEP_FILE, folder / CELLS_FILE
    record, problem = meta_problem(meta, sweep)
    if problem:
        return Damaged(meta, sweep, problem)
    assert record is not None  # no problem: a record
    problem = plan_problem(cells, sweep, record.get("n_cells"))
    if problem:
        return Damaged(cells, sweep, problem)
    trials = folder / TRIALS_DIR
    files = [trials / n for n in sorted(os.listdir(trials)) if n.endswith(".parquet")] if trials.is_dir() else []
    for path in files:
        problem = plan_problem(path, sweep, 1)
        if problem:
            return Damaged(path, sweep, problem)
    return record, [cells, *files]


def check_sweep(folder: Path, sweep: str) -> tuple[dict, list[Path]] | Damaged:
    """(the description, the cell files) of the sweep in `folder`, every file checked, or the first damaged file.

    A launch replaces cells.parquet, then sweep.json: a reader between the two sees a plan of another length than
    its description. So a file found damaged while either changes, or while the plan is newer than its description
    (a launch between its two writes), is read again, for up to REPLACING_S, before it is called damaged."""
    deadline = time.monotonic() + REPLACING_S
    while True:
        before = _stamps(folder)
        found = _check_once(folder, sweep)
        after = _stamps(folder)
        description, plan = after
        replacing = after != before or (description is not None and plan is not None and plan[2] > description[2])
        if not isinstance(found, Damaged) or not replacing or time.monotonic() > deadline:
            return found
        time.sleep(0.01)


def checked_sweep(folder: Path, sweep: str) -> tuple[dict, list[Path]]:
    """`check_sweep`, raising StoreDamage naming the damaged file."""
    found = check_sweep(folder, sweep)
    if isinstance(found, Damaged):
        raise found.error()
    return found


def sweep_files(results_dir: str | os.PathLike) -> SweepFiles:
    """The plans of every sweep in the store; a sweep with a damaged file is left out with a warning naming it."""
    root = Path(results_dir) / SWEEPS_DIR
    found = SweepFiles()
    for entry in sorted(os.scandir(root), key=lambda e: e.name) if root.is_dir() else []:
        folder = Path(entry.path)
        if not ((folder / CELLS_FILE).is_file() and (folder / SWEEP_FILE).is_file()):
            continue  # no plan (yet, or archived): its runs show under their own labels
        try:
            checked = check_sweep(folder, entry.name)
        except FileNotFoundError:  # archived by a launch this moment (db.archive_plan): it has no plan now
            continue
        if isinstance(checked, Damaged):
            message = f"leaving out sweep {entry.name!r}: {checked.path} is damaged ({checked.problem})"
            warnings.warn(message, CorruptShardWarning, stacklevel=2)
            found.damaged.append(checked)
            continue
        found.records.append(checked[0])
        found.plans.extend(map(str, checked[1]))
    return found


def read_sweep(results_dir: str | os.PathLike, sweep: str) -> tuple[dict[str, Any], list[pa.Table]]:
    """Sweep `sweep`'s description and cell files, the plan first, then the search cells recorded so far (CELL_SCHEMA
    columns; a file written before a column existed lacks it); DbError when the store has no such sweep,
    StoreDamage naming a damaged file."""
    folder = sweep_dir(results_dir, sweep)
    if not (folder / CELLS_FILE).is_file():
        raise DbError(f"no sweep {sweep!r} in {results_dir}: launch it with `harness sweep ABLATION`.")
    record, files = checked_sweep(folder, sweep)
    # not pq.read_table: that imports pyarrow.dataset and pandas (~0.4 s)
    return record, [pq.ParquetFile(path).read() for path in files]


def read_plan(results_dir: str | os.PathLike, sweep: str) -> pa.Table:
    """Sweep `sweep`'s plan (cells.parquet), every file of the sweep checked first (see `read_sweep`)."""
    return read_sweep(results_dir, sweep)[1][0]


def read_sweep_meta(results_dir: str | os.PathLike, sweep: str) -> dict[str, Any] | None:
    """Sweep `sweep`'s description (sweep.json), or None when the store has no such sweep; StoreDamage when it
    is damaged."""
    path = sweep_dir(results_dir, sweep) / SWEEP_FILE
    if not path.is_file():
        return None
    record, problem = meta_problem(path, sweep)
    if problem:
        raise Damaged(path, sweep, problem).error()
    return record


def read_plan_at(folder: Path, sweep: str) -> list[dict]:
    """The cells of the plan kept in `folder` (the current one or one under history/), [] when it has none."""
    path = Path(folder) / CELLS_FILE
    if not path.is_file():
        return []
    record, problem = meta_problem(Path(folder) / SWEEP_FILE, sweep)
    if problem:
        raise Damaged(Path(folder) / SWEEP_FILE, sweep, problem).error()
    assert record is not None  # no problem: a record
    problem = plan_problem(path, sweep, record.get("n_cells"))
    if problem:
        raise Damaged(path, sweep, problem).error()
    return pq.ParquetFile(path).read().to_pylist()


def plan_history(results_dir: str | os.PathLike, sweep: str) -> list[dict[str, Any]]:
    """The descriptions of the sweep's replaced plans, oldest first, each with `replaced` (its folder's number)."""
    history = sweep_dir(results_dir, sweep) / HISTORY_DIR
    found = []
    for name in sorted(os.listdir(history)) if history.is_dir() else []:
        meta = history / name / SWEEP_FILE
        if name.isdigit() and meta.is_file():
            record, problem = meta_problem(meta, sweep)
            if problem:
                raise Damaged(meta, sweep, problem).error()
            assert record is not None  # no problem: a record
            found.append({**record, "replaced": int(name)})
    return found
