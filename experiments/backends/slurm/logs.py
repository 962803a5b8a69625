"""Where the SLURM backend keeps its files: submitit's pickles and every task's logs under
`<results>/slurm/`, named after the job, its array element and its task, as the workers are; and the job ids
of every submission of a sweep (`jobs-<sweep>.txt`), so `harness sweep --follow` finds them later."""

from __future__ import annotations

import os
import re
from pathlib import Path

SLURM_DIR = "slurm"
_WORKER_NAME = re.compile(r"^slurm-(\d+(?:_\d+)?)_(\d+)$")  # slurm-JOB[_ELEMENT]_TASK


def slurm_dir(results_dir: str | os.PathLike) -> Path:
    """Where the backend's submitit files and every task's logs live."""
    return Path(results_dir) / SLURM_DIR


def worker_name(job_id: str, task: int) -> str:
    """The claim loop's name for task `task` of SLURM job `job_id` (`ID_ELEMENT` in an array)."""
    return f"slurm-{job_id}_{task}"


def slurm_log(results_dir: Path, worker: str) -> Path | None:
    """The stdout log of the SLURM task a worker name belongs to (stderr: the same name with .err), else None."""
    match = _WORKER_NAME.match(worker or "")
    if match is None:
        return None
    return slurm_dir(results_dir) / f"{match.group(1)}_{match.group(2)}_log.out"


def failed_cell_log(results_dir: Path, run_id: str) -> Path | None:
    """The SLURM log of the worker that last held a cell (its traceback is there and in the runs view's
    summary), or None when a local worker held it."""
    from experiments.workers.claims import current_claim

    claim = current_claim(results_dir, run_id)
    return None if claim is None else slurm_log(results_dir, claim.worker)


def record_jobs(results_dir: Path, sweep: str, job_ids: list[str]) -> None:
    """Add one submission's job ids (one line) to the sweep's record."""
    folder = slurm_dir(results_dir)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"jobs-{sweep}.txt", "a") as record:
        record.write(" ".join(job_ids) + "\n")


def recorded_jobs(results_dir: Path, sweep: str) -> list[str]:
    """Every job id ever submitted for the sweep from this results directory (none: an empty list)."""
    try:
        return (slurm_dir(results_dir) / f"jobs-{sweep}.txt").read_text().split()
    except FileNotFoundError:
        return []
