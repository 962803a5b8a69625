"""Stopping a sweep: Ctrl-C (SIGINT to the whole foreground group) or SIGTERM checkpoints the cells in flight,
prints how to resume and exits 128 + signal; the same command then finishes every cell once. A cell that
keeps raising is retried `--retries` times, then stored as failed with its traceback (exit 1)."""

import json
import os
import signal

import pytest

import db
from experiments.workers.claims import current_claim

from .conftest import finished_segments, start_sweep, wait_for
from .test_sweep_runs import cell_ids


@pytest.mark.slow
@pytest.mark.parametrize("sig, to_group", [(signal.SIGINT, True), (signal.SIGTERM, False)])
def test_a_stopped_sweep_checkpoints_its_cells_and_resumes(tmp_path, ablation_file, sig, to_group):
    path = ablation_file(steps=300, checkpoint_every=1000)
    ids, results = cell_ids(path), tmp_path / "results"
    # Beats every 0.5 s: the signal comes early in the cells even when a loaded machine runs them fast or late.
    sweep = start_sweep(path, results, "--workers", "2", "--heartbeat-every", "0.5")
    wait_for(lambda: all((c := current_claim(results, r)) is not None and (c.step or 0) >= 2 for r in ids), every=0.05)
    if to_group:
        os.killpg(sweep.pid, sig)  # what a terminal does on Ctrl-C
    else:
        sweep.send_signal(sig)  # what `kill` or a scheduler does to the command
    _, err = sweep.communicate()
    assert sweep.returncode == 128 + sig, err
    assert f"stopped by {signal.Signals(sig).name}" in err and "resume with the same command: harness sweep" in err
    for run_id in ids:
        assert db.run_state(results, run_id).last_status == "interrupted"  # checkpointed at its step, not lost
        assert (results / "checkpoints" / run_id / "last.ckpt").exists()
    if sig == signal.SIGTERM:
        return  # the resume below is the same for both signals; once is enough for the suite's time

    again = start_sweep(path, results, "--workers", "2")
    _, err = again.communicate()
    assert again.returncode == 0, err
    con = db.connect(results)
    for run_id in ids:
        assert finished_segments(results, run_id) == ["completed"]
        steps = [s for (s,) in con.execute("SELECT step FROM metrics WHERE run_id = ? AND name = 'train_loss' ORDER BY "
                                           "step", [run_id]).fetchall()]
        assert steps == list(range(1, 301))


@pytest.mark.slow
def test_a_cell_that_raises_is_retried_then_stored_failed_with_its_traceback(tmp_path, ablation_file):
    path = ablation_file()
    results = tmp_path / "results"
    sweep = start_sweep(path, results, "--retries", "1", "--set", "device=cuda")  # no GPU here: each attempt raises
    _, err = sweep.communicate()
    assert sweep.returncode == 1, err
    assert err.count("failed: cell") == 2
    con = db.connect(results)
    runs = con.execute("SELECT run_id, status, summary, n_segments FROM runs").fetchall()
    for run_id, status, summary, segments in runs:
        assert status == "failed" and segments == 2 and db.run_state(results, run_id).failures == 2
        assert ("no CUDA device is visible" in json.loads(summary)["error"]
                and "Traceback" in json.loads(summary)["traceback"])
