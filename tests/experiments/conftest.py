"""Sweep fixtures: a small ablation file on the shared test corpus, and `harness sweep` as a real process
(the way a user, a scheduler or a crash meets it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import db

ABLATION = '''
from experiments import Ablation, grid

ablation = Ablation(
    "{name}", "Does QK-norm help the tiny proxy?", base="tiny",
    grid=grid(qk_norm=["none", "rmsnorm"]), seeds={seeds}, lrs={lrs},
    train=dict(steps={steps}, batch_size=4, seq_len=32, warmup_steps=2, val_every={steps}, val_seqs=4,
               probe_every=10, probe_seqs=2, checkpoint_every={checkpoint_every}),
    data=dict(source={source!r}, cache_dir={cache_dir!r}, val_tokens={val_tokens}),
)
'''


@pytest.fixture
def ablation_file(tmp_path, train_data_cfg):
    """`ablation_file(name="t", seeds=1, lrs=[1e-3], steps=6, checkpoint_every=100)` → path of a .py file."""

    def write(name="t", seeds=1, lrs=(1e-3,), steps=6, checkpoint_every=100) -> Path:
        path = tmp_path / f"{name}.py"
        path.write_text(ABLATION.format(
            name=name, seeds=seeds, lrs=list(lrs), steps=steps, checkpoint_every=checkpoint_every,
            source=train_data_cfg.source, cache_dir=train_data_cfg.cache_dir, val_tokens=train_data_cfg.val_tokens,
        ))
        return path

    return write


def sweep_command(ablation: Path, results: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "cli.main", "sweep", str(ablation), "--results", str(results),
            "--set", "vocab_size=512", "--no-report", *extra]


def start_sweep(ablation: Path, results: Path, *extra: str) -> subprocess.Popen:
    """`harness sweep` in its own process group (so a test can kill the whole sweep, workers included)."""
    return subprocess.Popen(sweep_command(ablation, results, *extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def wait_for(condition, every: float = 0.1) -> None:
    """Poll until `condition()` holds. No deadline here: how long the work takes depends on the machine's load; a
    hang ends at the test's timeout (pytest-timeout, pyproject.toml)."""
    while not condition():
        time.sleep(every)


def finished_segments(results: Path, run_id: str) -> list[str]:
    """The statuses of a run's segments that ended in a result (a cell trained once has exactly one)."""
    return [s for s in db.run_state(results, run_id).statuses.values() if s in ("completed", "diverged")]


def processes_mentioning(text: str) -> list[int]:
    """Pids of the live processes whose command line mentions `text` (say, a test's results directory)."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and text.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:  # it ended meanwhile
            pass
    return pids


def kill_group(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
