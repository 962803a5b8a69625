"""`harness run` under SIGTERM (what a scheduler sends on preemption) and Ctrl-C: a checkpoint at the current
step, status `interrupted`, a printed way to continue, exit 128 + signal; `--resume` then finishes the run."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import db
from cli.main import main

STEPS = 400


def _start(tmp_path, train_data_cfg):
    args = [
        "run", "--preset", "tiny", "--results", str(tmp_path / "results"), "--no-progress", "--data",
        train_data_cfg.source, "--set", f"cache_dir={train_data_cfg.cache_dir}", "--set",
        f"val_tokens={train_data_cfg.val_tokens}", "--set", "vocab_size=512", "--steps", str(STEPS), "--set",
        "seq_len=32", "--set", "batch_size=4", "--set", "val_every=1000", "--set", "probe_every=1000", "--set",
        "val_seqs=4",
    ]
    process = subprocess.Popen([sys.executable, "-m", "cli.main", *args], stderr=subprocess.PIPE, text=True)
    while not list((tmp_path / "results").glob("runs/*/manifest/*.parquet")):  # the trainer is set up
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    set_up = cpu_seconds(process.pid)
    while cpu_seconds(process.pid) < set_up + 1.0:  # a few steps in, in CPU time (a busy machine stretches wall time)
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.05)
    return process, args


def cpu_seconds(pid: int) -> float:
    """The user + system time process `pid` has used (fields 14 and 15 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_checkpoints_exits_nonzero_and_resume_finishes(tmp_path, train_data_cfg, sig, capsys):
    process, args = _start(tmp_path, train_data_cfg)
    process.send_signal(sig)
    _, err = process.communicate()
    assert process.returncode == 128 + sig, err
    assert f"interrupted by {signal.Signals(sig).name} at step" in err
    assert "continue with: harness run" in err and err.rstrip().endswith("--resume")
    con = db.connect(tmp_path / "results")
    (run_id, status, last_step), = con.execute("SELECT run_id, status, last_step FROM runs").fetchall()
    assert status == "interrupted" and 1 <= last_step < STEPS
    assert (tmp_path / "results" / "checkpoints" / run_id / "last.ckpt").resolve().name == f"step{last_step:07d}.ckpt"

    assert main([*args, "--resume"]) == 0
    assert f"run {run_id}: completed" in capsys.readouterr().out
    con = db.connect(tmp_path / "results")
    steps = [s for (s,) in con.execute("SELECT step FROM metrics WHERE name = 'train_loss' ORDER BY step").fetchall()]
    assert steps == list(range(1, STEPS + 1))  # no gap, no repeat across the two segments
