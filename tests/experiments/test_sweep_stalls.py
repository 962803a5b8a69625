"""Workers paused (SIGSTOP) past --stale-after, as a GC pause, a swapping node or a hung filesystem pauses
them: the cell is taken over and finished once, the paused worker writes nothing more into it when it wakes
and goes on, `last.ckpt` and `harness sample` see the result's weights, and the exit code tells the truth."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import db
from experiments import expand
from experiments.declare.load import load_ablation

from .conftest import start_sweep, wait_for
from .stalls import (
    FAST,
    assert_final_checkpoint_stands,
    holder_pid,
    pause,
    raw_results,
    resume,
    stall_until_taken_over,
    worker_logs,
)


def cell_ids(ablation_path):
    return [c.run_id for c in expand(load_ablation(str(ablation_path))[0], overrides={"vocab_size": 512}).cells]


def logged_steps(results, run_id):
    con = db.connect(results)
    return [s for (s,) in con.execute("SELECT step FROM metrics WHERE run_id = ? AND name = 'train_loss' ORDER BY step",
                                      [run_id]).fetchall()]


def check_store(results, ids, steps):
    """Every cell: one result ever written, `completed` in every reader, each step once, its final weights
    standing, and `harness sample` loads them."""
    con = db.connect(results)
    statuses = dict(con.execute("SELECT run_id, status FROM sweep_cells WHERE sweep = 't'").fetchall())
    assert statuses == {r: "completed" for r in ids}
    assert con.execute("SELECT n_cells, completed FROM sweeps WHERE sweep = 't'").fetchall() == [(len(ids), len(ids))]
    for run_id in ids:
        assert raw_results(results, run_id) == 1, run_id
        assert db.run_state(results, run_id).result == "completed"
        assert logged_steps(results, run_id) == list(range(1, steps + 1)), run_id
        assert_final_checkpoint_stands(results, run_id)
    sample = subprocess.run([sys.executable, "-m", "cli.main", "sample", ids[0], "--results", str(results),
                             "--prompt", "def", "--max-new-tokens", "3", "--temperature", "0"],
                            capture_output=True, text=True)
    assert sample.returncode == 0, sample.stderr


def sweeps_row(results):
    """`harness sweeps`' numbers for sweep t: cells, completed, diverged, failed, running, left."""
    listing = subprocess.run([sys.executable, "-m", "cli.main", "sweeps", "--results", str(results)],
                             capture_output=True, text=True, check=True).stdout
    (row,) = [line.split() for line in listing.splitlines() if line.startswith("t ")]
    return [int(n) for n in row[1:7]]


def stalled_sweep(tmp_path, ablation_file, steps, checkpoint_every, moment, every):
    """A 4-cell, 2-worker sweep in which the first worker seen at `moment` (a function (results, ids) →
    (run_id, pid) or None, which pauses the pid itself) stays paused until another worker finished its cell.
    Checks what holds whatever the moment; returns (results, ids, the stalled cell)."""
    path = ablation_file(seeds=2, steps=steps, checkpoint_every=checkpoint_every)
    ids, results = cell_ids(path), tmp_path / "results"
    warm_data_cache(path)
    sweep = start_sweep(path, results, "--workers", "2", *FAST)
    caught = []

    def paused_at_moment():
        caught[:] = [moment(results, ids)]
        return caught[0] is not None

    wait_for(paused_at_moment, every=every)
    run_id, pid = caught[0]
    stall_until_taken_over(results, run_id, pid)
    time.sleep(1.0)  # the woken worker runs on for a moment: it must notice before writing anything
    _, err = sweep.communicate()
    assert sweep.returncode == 0, err  # the exit code agrees with the store, read below
    check_store(results, ids, steps)
    assert sweeps_row(results) == [4, 4, 0, 0, 0, 0]
    assert "starting a new one" not in err  # the paused worker went on; no respawn was spent
    assert worker_logs(results, "t").count("lost the cell to another worker") == 1  # healthy workers never lost one
    return results, ids, run_id


def warm_data_cache(path):
    """Build the cells' tokenizer and tokens before the sweep: a worker paused while it builds them holds the
    cache's build lock, and every other worker waits on it until it wakes (docs/sweeps.md), a stall of
    the whole sweep rather than a lost cell, and not what these tests pause for."""
    from harness.data import prepare

    cell = expand(load_ablation(str(path))[0], overrides={"vocab_size": 512}).cells[0]
    prepare(cell.data, cell.model.vocab_size)


def claimed_not_started(results, ids):
    for run_id in ids:
        pid = holder_pid(results, run_id)
        if pid is not None and not (results / "runs" / run_id / "manifest").exists():
            pause(pid)  # at once; then check it really had not opened its segment
            if not (results / "runs" / run_id / "manifest").exists():
                return run_id, pid
            resume(pid)
    return None


def past_a_checkpoint(results, ids):
    for run_id in ids:
        pid = holder_pid(results, run_id)
        if pid is not None and (results / "checkpoints" / run_id / "last.ckpt").exists() \
                and db.run_state(results, run_id).result is None:
            pause(pid)
            return run_id, pid
    return None


def writing_a_checkpoint(results, ids):
    """A checkpoint file newer than the one `last.ckpt` points at: its writer is between the two."""
    for run_id in ids:
        folder = results / "checkpoints" / run_id
        pid = holder_pid(results, run_id)
        if pid is None or not (folder / "last.ckpt").exists():
            continue
        files = sorted(p.name for p in folder.glob("step*.ckpt"))
        if files and files[-1] != (folder / "last.ckpt").readlink().name:
            pause(pid)
            return run_id, pid
    return None


@pytest.mark.slow
def test_a_worker_paused_after_its_claim_before_its_first_step_loses_the_cell_and_writes_nothing(tmp_path,
                                                                                                 ablation_file):
    results, ids, run_id = stalled_sweep(tmp_path, ablation_file, 20, 5, claimed_not_started, every=0.002)
    assert len(list((results / "runs" / run_id / "manifest").iterdir())) == 1  # the woken worker opened nothing


@pytest.mark.slow
def test_a_worker_paused_mid_cell_writes_no_checkpoint_or_last_after_it_wakes(tmp_path, ablation_file):
    results, ids, run_id = stalled_sweep(tmp_path, ablation_file, 60, 10, past_a_checkpoint, every=0.01)
    taken = db.connect(results).execute("SELECT count(*) FROM _manifests WHERE run_id = ?", [run_id]).fetchone()[0]
    assert taken == 2  # the paused worker's segment and the taker's


@pytest.mark.slow
def test_a_worker_paused_while_it_writes_a_checkpoint_does_not_repoint_last(tmp_path, ablation_file):
    """Paused between writing a checkpoint file and pointing `last.ckpt` at it (polled for; where the window
    is missed, the pause lands just after, mid-cell, which the same guarantees cover)."""
    stalled_sweep(tmp_path, ablation_file, 80, 2, writing_a_checkpoint, every=0.0005)


def stopped_inside_its_close(marker):
    """The worker that stopped itself inside its close (tests/experiments/stop_in_close/sitecustomize.py), once
    it has stopped."""

    def moment(results, ids):
        if not marker.exists() or not marker.read_text():
            return None
        pid, run_id = marker.read_text().split()
        with open(f"/proc/{pid}/stat") as stat:
            return (run_id, int(pid)) if stat.read().rsplit(")", 1)[1].split()[0] == "T" else None

    return moment


@pytest.mark.slow
def test_a_worker_stopped_inside_its_close_records_nothing_and_the_takers_result_stands(tmp_path, ablation_file,
                                                                                          monkeypatch):
    """The late-status race end to end: the worker passed its fence check and stopped (SIGSTOP) before its status
    was published; another took the cell over and finished it; woken, the first one's close is refused."""
    marker = tmp_path / "stopped"
    hook = Path(__file__).parent / "stop_in_close"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("HARNESS_TEST_STOP_IN_CLOSE", str(marker))
    results, ids, run_id = stalled_sweep(tmp_path, ablation_file, 20, 5, stopped_inside_its_close(marker), every=0.05)
    con = db.connect(results)
    assert con.execute("SELECT n_segments FROM runs WHERE run_id = ?", [run_id]).fetchall() == [(2,)]
    assert db.result_summary(results, run_id)["checkpoint"].endswith("-g1.ckpt")
    assert "status 'completed' not recorded: claim 0 was superseded by claim 1" in worker_logs(results, "t")
