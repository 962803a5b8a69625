"""Helpers for the stalled-worker tests: what the store holds raw (every segment, counting or not), which
checkpoint stands for a run, and pausing a worker process."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pyarrow.parquet as pq

import db
from experiments.workers.claims import current_claim

RESULTS = ("completed", "diverged", "pruned")
FAST = ("--heartbeat-every", "0.5", "--stale-after", "2.5")  # a stall of 2.5 s loses the cell


def raw_statuses(results: Path, run_id: str) -> list[str]:
    """Every status shard of the run, counting or not, in segment order."""
    folder = Path(results) / "runs" / run_id / "status"
    if not folder.is_dir():
        return []
    return [pq.ParquetFile(folder / name).read(columns=["status"]).column("status")[0].as_py()
            for name in sorted(os.listdir(folder)) if name.endswith(".parquet")]


def raw_results(results: Path, run_id: str) -> int:
    """How many segments of the run closed with a result: exactly-once means at most one, ever."""
    return sum(1 for status in raw_statuses(results, run_id) if status in RESULTS)


def assert_final_checkpoint_stands(results: Path, run_id: str) -> None:
    """`last.ckpt` points at the checkpoint the result names, which holds the run's last step."""
    from harness.train.checkpoints import checkpoint_dir, checkpoint_step

    summary = db.result_summary(results, run_id)
    named = summary["checkpoint"]
    folder = checkpoint_dir(results, run_id)
    assert os.readlink(folder / "last.ckpt") == named, run_id
    assert checkpoint_step(folder / named) == summary["steps"], run_id


def holder_pid(results: Path, run_id: str) -> int | None:
    info = current_claim(results, run_id)
    return None if info is None or info.released else info.pid


def pause(pid: int) -> None:
    os.kill(pid, signal.SIGSTOP)


def resume(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


def stall_until_taken_over(results: Path, run_id: str, pid: int) -> None:
    """Keep `pid` paused (it may be paused already) until another worker finished `run_id`, then wake it."""
    from .conftest import wait_for

    pause(pid)
    try:
        wait_for(lambda: db.run_state(results, run_id).result is not None, every=0.1)
    finally:
        resume(pid)


def worker_logs(results: Path, sweep: str) -> str:
    """Every local worker's log of the sweep, concatenated."""
    return "".join(p.read_text() for p in (Path(results) / "sweeps" / sweep / "logs").glob("w*.log"))
