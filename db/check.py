"""`harness db check`: every file of a results store checked; each damaged or orphaned one named with what it affects.

It looks deeper than connecting does (db/validate.py): every shard is read whole against its page checksums
(connecting reads only data shards' footers, and trusts what the index says it checked), every plan, sweep
description and replaced plan, each file of the catalog index, and every checkpoint against its members' CRC-32
(torch.load checks none). Orphans are files no reader shows: a status or data shard whose segment has no manifest,
the checkpoints of a run the store does not have, half a plan. db/quarantine.py moves what it finds aside.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from db.catalog import run_shards
from db.errors import NoResultsError
from db.index import INDEX_DIR
from db.paths import RUNS_DIR, is_shard_name, parse_segment
from db.schema import read_version_file
from db.sweeps import CELLS_FILE, HISTORY_DIR, SWEEP_FILE, SWEEPS_DIR, TRIALS_DIR
from db.validate import checkpoint_problem, index_rows, kind_of, meta_problem, plan_problem, shard_problem

CHECKPOINTS_DIR = "checkpoints"  # <results>/checkpoints/<run_id>/ (harness/train/checkpoints.py)
NO_READER = "no reader shows it"


@dataclass(frozen=True)
class Finding:
    """One damaged or orphaned file (or folder), relative to the results directory, and whose it is."""

    path: str
    kind: str  # 'metrics shard', 'plan', 'sweep meta', 'index', 'checkpoint', 'orphaned status shard', …
    problem: str
    run_id: str | None = None
    sweep: str | None = None
    orphan: bool = False

    @property
    def replaced_plan(self) -> bool:
        """A file of a plan kept under a sweep's history/ (read only by `harness sweeps SWEEP --history`)."""
        return HISTORY_DIR in Path(self.path).parts


@dataclass
class Check:
    """What one check of a store found, and which sweeps' cells each run is (from the readable plans)."""

    results_dir: Path
    findings: list[Finding] = field(default_factory=list)
    checked: int = 0  # files read
    cells: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # run_id → [(sweep, cell label)]

    def relative(self, path: str | os.PathLike) -> str:
        return os.path.relpath(path, self.results_dir)

    def add(self, path: str | os.PathLike, problem: str, **owner) -> None:
        relative = self.relative(path)
        self.findings.append(Finding(relative, kind_of(relative), problem, **owner))

    def orphan(self, path: str | os.PathLike, kind: str, problem: str, **owner) -> None:
        self.findings.append(Finding(self.relative(path), kind, problem, orphan=True, **owner))


def _check_run(check: Check, run: os.DirEntry) -> None:
    manifest_dir = os.path.join(run.path, "manifest")
    names = os.listdir(manifest_dir) if os.path.isdir(manifest_dir) else []
    opened = {parse_segment(name) for name in names if is_shard_name(name)}
    for table, path, (size, _) in run_shards(run.path):
        check.checked += 1
        problem = shard_problem(path, size, table, deep=True)
        if problem:
            check.add(path, problem, run_id=run.name)
        elif table != "manifest" and parse_segment(os.path.basename(path)) not in opened:
            check.orphan(path, f"orphaned {table} shard", "its segment has no manifest shard", run_id=run.name)


def _label(row: dict) -> str:
    where = f"trial {row['trial']}" if row.get("trial") is not None else f"cell {row.get('cell')}"
    return f"{where}: {row.get('arm')} lr={row.get('lr')} seed={row.get('seed')}"


def _check_plan(check: Check, folder: Path, sweep: str) -> None:
    """The description, plan and (current plan only) search cells kept in `folder`."""
    meta, cells = folder / SWEEP_FILE, folder / CELLS_FILE
    if not (meta.is_file() or cells.is_file()):
        return
    if not (meta.is_file() and cells.is_file()):
        present, missing = (meta, CELLS_FILE) if meta.is_file() else (cells, SWEEP_FILE)
        check.orphan(present, "half a plan", f"its {missing} is missing", sweep=sweep)
        return
    check.checked += 2
    record, problem = meta_problem(meta, sweep)
    if problem:
        check.add(meta, problem, sweep=sweep)
    current = folder.parent.name == SWEEPS_DIR
    expected = {cells: record.get("n_cells") if record else None}
    expected |= {path: 1 for path in sorted((folder / TRIALS_DIR).glob("*.parquet"))} if current else {}
    for path, n_cells in expected.items():
        check.checked += path != cells
        problem = plan_problem(path, sweep, n_cells)
        if problem:
            check.add(path, problem, sweep=sweep)
        elif current:
            for row in pq.ParquetFile(path).read().to_pylist():
                check.cells.setdefault(row["run_id"], []).append((sweep, _label(row)))


def _check_sweeps(check: Check) -> None:
    root = check.results_dir / SWEEPS_DIR
    for entry in sorted(os.scandir(root), key=lambda e: e.name) if root.is_dir() else []:
        if entry.is_dir():
            _check_plan(check, Path(entry.path), entry.name)
            history = Path(entry.path) / HISTORY_DIR
            for replaced in sorted(history.iterdir()) if history.is_dir() else []:
                _check_plan(check, replaced, entry.name)


def _check_index(check: Check) -> None:
    root = check.results_dir / INDEX_DIR
    for path in sorted(root.glob("*.parquet")) if root.is_dir() else []:
        check.checked += 1
        _, problem = index_rows(path)
        if problem:
            check.add(path, problem)


def _check_checkpoints(check: Check) -> None:
    root = check.results_dir / CHECKPOINTS_DIR
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        files = sorted(p for p in folder.glob("*.ckpt") if p.is_file() and not p.is_symlink())
        if files and not (check.results_dir / RUNS_DIR / folder.name).is_dir():
            check.orphan(folder, "orphaned checkpoints", f"the store has no run {folder.name}", run_id=folder.name)
            continue
        for path in files:
            check.checked += 1
            problem = checkpoint_problem(path)
            if problem:
                check.add(path, problem, run_id=folder.name)


def check_store(results_dir: str | os.PathLike) -> Check:
    """Check every file of the store at `results_dir`; NoResultsError when there is no store there."""
    root = Path(os.path.abspath(results_dir))
    if not root.is_dir():
        raise NoResultsError(f"no results directory at {root}: nothing to check.")
    read_version_file(root)  # an unknown or newer schema version raises: nothing here could be judged
    check = Check(root)
    runs = root / RUNS_DIR
    for run in sorted(os.scandir(runs), key=lambda e: e.name) if runs.is_dir() else []:
        if run.is_dir():
            _check_run(check, run)
    _check_sweeps(check)
    _check_index(check)
    _check_checkpoints(check)
    return check


def _cells_of(check: Check, run_id: str) -> str:
    cells = check.cells.get(run_id, [])
    return "; ".join(f"sweep {sweep} {label}" for sweep, label in cells) or "in no sweep's plan"


def affects(check: Check, finding: Finding) -> str:
    """What the damaged or orphaned file costs, in words: which run, cells, sweep or command."""
    if finding.orphan:
        return f"nothing ({NO_READER})"
    if finding.kind == "index":
        return "only the speed of connecting (readers ignore the index and read the shards)"
    if finding.kind == "checkpoint":
        return f"the weights of run {finding.run_id} (`harness sample`, a resume); its result, if any, stands"
    if finding.sweep is not None:
        if finding.replaced_plan:
            return f"the history of sweep {finding.sweep} (`harness sweeps {finding.sweep} --history`)"
        return (f"sweep {finding.sweep}: left out of every listing; compare, summary, report and sweep --status "
                "refuse it")
    assert finding.run_id is not None  # what is left: a run's findings
    return f"run {finding.run_id} ({_cells_of(check, finding.run_id)}): shown as damaged, and refused by compare, " \
           "summary and report"


def report_line(check: Check, finding: Finding) -> str:
    """One line: path, kind, what is wrong, what it affects."""
    return f"{finding.path}: {finding.kind}: {finding.problem}; affects {affects(check, finding)}"
