"""Closing a finished sweep (experiments.workers.closing), as the local launcher does it: once, claimed, waited
for while another closes it, done again after a closing that was killed or failed, and never a traceback."""

import json
import os
import signal
import subprocess
import sys

import pytest

import db
from experiments.backends.local import LocalSweep
from experiments.backends.local_workers import LocalWorkers
from experiments.workers.claims import current_claim
from experiments.workers.closing import Closing, close_sweep

from .test_exit_code import stored_plan

HOLD_THE_CLOSING = """
import sys, time
from experiments.workers.claims import BeatWatcher, Heartbeat, try_claim
claim = try_claim(sys.argv[1], "sweep-close.t", worker="other", sweep="t", watcher=BeatWatcher(60.0))
with Heartbeat(claim, 0.5, 0):
    print("closing", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def finished_sweep(results, ablation_file):
    """The sweep `t` of 2 cells, each run finished with many small shards (as a run flushing often leaves)."""
    cells = stored_plan(ablation_file(seeds=1), results)
    for cell in cells:
        writer = db.RunWriter.open(results, cell.run_id, claim=0, flush_rows=5)
        for step in range(50):
            writer.log_metrics(step, {"train_loss": 1.0})
        writer.close("completed")
    return cells


def shards(results, cells):
    return sum(len(os.listdir(results / "runs" / c.run_id / "metrics")) for c in cells)


def finish(results):
    workers = LocalWorkers(results, "t", ["cpu"], retries=0, stale_after=10.0, heartbeat_every=2.0)
    return LocalSweep(workers, progress=False, report=None)._finish()


def test_a_finished_sweep_is_closed_once(tmp_path, ablation_file, capsys):
    results = tmp_path / "results"
    cells = finished_sweep(results, ablation_file)
    assert shards(results, cells) == 20
    assert finish(results) == 0
    assert shards(results, cells) == 2
    marker = results / "sweeps" / "t" / "logs" / "closed.json"
    closed_at = marker.stat().st_mtime_ns
    assert finish(results) == 0 and marker.stat().st_mtime_ns == closed_at  # closed already: nothing again
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_a_launcher_waits_while_another_closes_then_exits_0(tmp_path, ablation_file, capsys):
    results = tmp_path / "results"
    cells = finished_sweep(results, ablation_file)
    other = subprocess.Popen([sys.executable, "-c", HOLD_THE_CLOSING, str(results), "3"], stdout=subprocess.PIPE,
                             text=True)
    assert other.stdout.readline() == "closing\n"
    assert close_sweep(results, "t", retries=0, stale_after=10.0, report=None, closer="me") is Closing.BUSY
    assert finish(results) == 0  # waited for the other (it closes nothing: it released), then closed it itself
    other.wait()
    err = capsys.readouterr().err
    assert err == "sweep t: another launcher is closing it (compaction, the report's last page); waiting for it\n"
    assert (shards(results, cells) == 2
            and json.loads((results / "sweeps/t/logs/closed.json").read_text())["by"] != "other")


@pytest.mark.slow
def test_a_closing_killed_midway_is_finished_by_the_next_launch(tmp_path, ablation_file):
    results = tmp_path / "results"
    cells = finished_sweep(results, ablation_file)
    other = subprocess.Popen([sys.executable, "-c", HOLD_THE_CLOSING, str(results), "60"], stdout=subprocess.PIPE,
                             text=True)
    assert other.stdout.readline() == "closing\n"
    other.send_signal(signal.SIGKILL)  # killed while it closes: its claim is free at once (its process is gone)
    other.wait()
    assert not current_claim(results, "sweep-close.t").released
    assert finish(results) == 0
    assert shards(results, cells) == 2 and (results / "sweeps/t/logs/closed.json").exists()


def test_a_closing_that_fails_says_so_in_one_line_and_the_next_launch_closes(tmp_path, ablation_file, capsys):
    results = tmp_path / "results"
    cells = finished_sweep(results, ablation_file)
    (results / "compact.lock").mkdir()  # the lock cannot be opened: compaction fails with an OSError
    assert finish(results) == 0  # every cell has its result: the exit code says so
    err = capsys.readouterr().err
    assert err.startswith("sweep t: the store could not be compacted (") and err.count("\n") == 1, err
    assert not (results / "sweeps/t/logs/closed.json").exists() and shards(results, cells) == 20
    (results / "compact.lock").rmdir()
    assert finish(results) == 0 and shards(results, cells) == 2
