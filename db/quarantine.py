"""`harness db check --repair`: move aside what the store cannot trust, never deleting it, and say what a rerun
retrains.

Everything moves to `<results>/quarantine/<UTC timestamp>/<the same relative path>`, where no reader looks:
- a run with a damaged shard moves whole (`runs/<run_id>/`, with `checkpoints/<run_id>/`): its result cannot be
  trusted, so its cell is pending again and the next `harness sweep` of its sweep trains it from the start;
- a sweep with a damaged description, plan or search cell loses its plan (sweep.json, cells.parquet, trials/): a
  new launch writes it again and adopts the sweep's finished runs (their keys are their configs);
- a damaged replaced plan moves its history/<n>/ folder; a damaged index file the whole index/ (`harness db
  compact` writes a new one); a damaged checkpoint moves with the `last.ckpt` link that names it;
- an orphan moves as it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from db.check import CHECKPOINTS_DIR, Check, Finding
from db.index import INDEX_DIR
from db.paths import RUNS_DIR
from db.run_state import run_state
from db.sweeps import CELLS_FILE, SWEEP_FILE, SWEEPS_DIR, TRIALS_DIR

QUARANTINE_DIR = "quarantine"


@dataclass
class Repair:
    """Where each moved path went (relative to the results directory), and what a rerun trains again."""

    folder: Path
    moved: list[tuple[str, str]] = field(default_factory=list)
    retrain: list[str] = field(default_factory=list)


def _run_units(check: Check, finding: Finding) -> tuple[list[str], list[str]]:
    run = finding.run_id
    assert run is not None  # a run's finding names it
    cells = check.cells.get(run, [])
    lines = [f"the next `harness sweep` of {sweep} trains {label} ({run}) again" for sweep, label in cells]
    return ([f"{RUNS_DIR}/{run}", f"{CHECKPOINTS_DIR}/{run}"],
            lines or [f"run {run} is in no sweep's plan: train it again yourself (`harness run ... --run-id {run}`)"])


def _checkpoint_units(check: Check, finding: Finding) -> tuple[list[str], list[str]]:
    path = check.results_dir / finding.path
    assert finding.run_id is not None  # a checkpoint's finding names its run
    links = [p for p in path.parent.iterdir() if p.is_symlink() and os.path.realpath(p) == os.path.realpath(path)]
    result = run_state(check.results_dir, finding.run_id).result
    line = (f"run {finding.run_id} keeps its result ({result}); `harness sample` finds no weights for it" if result else
            f"the next `harness sweep` resumes run {finding.run_id} from an older checkpoint, or from its start")
    return [finding.path, *(check.relative(link) for link in links)], [line]


def _units(check: Check, finding: Finding) -> tuple[list[str], list[str]]:
    """(paths to move, what a rerun trains again) for one finding."""
    if finding.orphan:
        return [finding.path], []
    if finding.kind == "index":
        return [INDEX_DIR], ["`harness db compact` writes a new index (nothing is trained again)"]
    if finding.kind == "checkpoint":
        return _checkpoint_units(check, finding)
    if finding.sweep is not None and finding.replaced_plan:
        return [str(Path(*Path(finding.path).parts[:4]))], []  # sweeps/<sweep>/history/<n>
    if finding.sweep is not None:
        folder = f"{SWEEPS_DIR}/{finding.sweep}"
        return ([f"{folder}/{name}" for name in (SWEEP_FILE, CELLS_FILE, TRIALS_DIR)],
                [f"sweep {finding.sweep} has no plan now: launching it again (`harness sweep ABLATION --name "
                 f"{finding.sweep}`) writes one and keeps its finished runs (none is trained again)"])
    return _run_units(check, finding)


def _stamp(root: Path) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    folder, n = root / QUARANTINE_DIR / stamp, 1
    while folder.exists():
        n += 1
        folder = root / QUARANTINE_DIR / f"{stamp}-{n}"
    return folder


def repair(check: Check) -> Repair:
    """Move every finding's paths (see the module docstring) under a fresh quarantine folder."""
    done = Repair(_stamp(check.results_dir))
    paths: list[str] = []
    for finding in check.findings:
        units, lines = _units(check, finding)
        paths += [p for p in units if p not in paths]
        done.retrain += [line for line in lines if line not in done.retrain]
    for path in paths:
        source = check.results_dir / path
        inside = any(Path(path).is_relative_to(other) for other in paths if other != path)
        if inside or not (source.exists() or source.is_symlink()):
            continue  # moved with the folder that holds it, or not there (a run with no checkpoints)
        target = done.folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, target)
        done.moved.append((path, os.path.relpath(target, check.results_dir)))
    return done
