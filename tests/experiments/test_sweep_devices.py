"""A sweep whose cells train on two devices (CPU processes over gloo here): each worker runs a helper rank, a
SIGTERM to the sweep stops both ranks of every cell at one step with a checkpoint, and the same command resumes
and finishes every cell once, with one writer (no step written twice, one result segment) and the losses of
the same cell trained on one process (the oracle) to 1e-5."""

import signal

import pytest

import db
from experiments.workers.claims import current_claim
from harness.data import prepare
from harness.train.run import RunSpec, train_run

from .conftest import finished_segments, start_sweep, wait_for
from .test_sweep_runs import cell_ids


def losses(results, run_id):
    return db.connect(results).execute("SELECT step, value FROM metrics WHERE run_id = ? AND name = 'train_loss' "
                                       "ORDER BY step", [run_id]).fetchall()


@pytest.mark.slow
def test_two_device_cells_stop_together_resume_and_match_one_device(tmp_path, ablation_file):
    from experiments import expand
    from experiments.declare.load import load_ablation

    path, steps = ablation_file(steps=40, checkpoint_every=10), 40
    ids, results = cell_ids(path), tmp_path / "results"
    sweep = start_sweep(path, results, "--devices-per-cell", "2", "--heartbeat-every", "0.5")
    wait_for(lambda: (c := current_claim(results, ids[0])) is not None and (c.step or 0) >= 3, every=0.05)
    sweep.send_signal(signal.SIGTERM)  # to the command: it stops its worker, whose helper stops with it
    _, err = sweep.communicate()
    assert sweep.returncode == 128 + signal.SIGTERM, err
    assert db.run_state(results, ids[0]).last_status == "interrupted"

    again = start_sweep(path, results, "--devices-per-cell", "2")
    _, err = again.communicate()
    assert again.returncode == 0, err
    log = (results / "sweeps" / "t" / "logs" / "w0.log").read_text()
    assert "ended with" not in log  # no helper rank saw its cell fail
    for run_id in ids:
        assert finished_segments(results, run_id) == ["completed"]
        assert [s for s, _ in losses(results, run_id)] == list(range(1, steps + 1))  # no gap, no step twice

    cell = expand(load_ablation(str(path))[0], overrides={"vocab_size": 512}).cells[0]
    oracle = tmp_path / "oracle"
    train_run(RunSpec(cell.model, cell.train, cell.data, oracle, cell.run_id), prepare(cell.data, 512), progress=False)
    want, got = losses(oracle, cell.run_id), losses(results, cell.run_id)
    assert max(abs(a - b) for (_, a), (_, b) in zip(got, want)) < 1e-5
