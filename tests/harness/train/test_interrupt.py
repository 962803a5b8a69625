"""A stop request (what SIGINT/SIGTERM raise) ends a run at a finished step with a checkpoint there, status
`interrupted`; resuming continues from that exact step to the uninterrupted final loss."""

import signal

import pytest

import db
from harness.train.interrupt import clear_stop_request, request_stop, stop_requested


def losses(results, run_id):
    rows = db.connect(results).execute(
        "SELECT step, value FROM metrics WHERE run_id = ? AND name = 'train_loss' ORDER BY step", [run_id]
    ).fetchall()
    return rows


@pytest.fixture(autouse=True)
def no_pending_stop():
    clear_stop_request()
    yield
    clear_stop_request()


@pytest.mark.slow
def test_stop_request_checkpoints_at_the_step_and_resume_matches_the_whole_run(run_tiny, monkeypatch):
    whole, results = run_tiny("whole", grad_accum=2, checkpoint_every=100)
    from harness.train.divergence import DivergenceMonitor

    original = DivergenceMonitor.on_train_batch_end

    def stop_mid_accumulation_of_step_6(self, trainer, pl_module, outputs, batch, batch_idx):
        original(self, trainer, pl_module, outputs, batch, batch_idx)
        if trainer.global_step == 5 and pl_module.finished_step_values() is None:
            request_stop(signal.SIGTERM)  # arrives half-way through an accumulated step

    monkeypatch.setattr(DivergenceMonitor, "on_train_batch_end", stop_mid_accumulation_of_step_6)
    stopped, _ = run_tiny("stopped", grad_accum=2, checkpoint_every=100)
    monkeypatch.undo()
    assert stopped.status == "interrupted" and stopped.interrupted.step == 6
    assert stopped.interrupted.signum == signal.SIGTERM and stop_requested() is None  # handled, not pending
    assert (results / "checkpoints" / "stopped" / "last.ckpt").resolve().name == "step0000006.ckpt"
    con = db.connect(results)
    assert con.execute("SELECT status, last_step FROM runs WHERE run_id = 'stopped'").fetchone() == ("interrupted", 6)

    resumed, _ = run_tiny("stopped", resume=True, grad_accum=2, checkpoint_every=100)
    assert resumed.status == "completed"
    assert resumed.summary["final_train_loss"] == pytest.approx(whole.summary["final_train_loss"], rel=1e-6)
    assert [s for s, _ in losses(results, "stopped")] == [s for s, _ in losses(results, "whole")]  # no gap, no repeat
    assert [v for _, v in losses(results, "stopped")] == pytest.approx([v for _, v in losses(results, "whole")],
                                                                       rel=1e-6)


@pytest.mark.slow
def test_resume_without_a_checkpoint_starts_again_from_step_0_as_a_new_segment(run_tiny, monkeypatch):
    from harness.train.divergence import DivergenceMonitor

    original = DivergenceMonitor.on_train_batch_end

    def crash_at_step_2(self, trainer, *args):
        original(self, trainer, *args)
        if trainer.global_step == 2:
            raise RuntimeError("worker died")  # before the first checkpoint (step 4)

    monkeypatch.setattr(DivergenceMonitor, "on_train_batch_end", crash_at_step_2)
    with pytest.raises(RuntimeError):
        run_tiny("short")
    monkeypatch.undo()
    whole, results = run_tiny("short", resume=True)
    assert whole.status == "completed"
    con = db.connect(results)
    assert con.execute("SELECT status, n_segments FROM runs WHERE run_id = 'short'").fetchone() == ("completed", 2)
    steps = [s for s, _ in losses(results, "short")]
    assert steps == sorted(set(steps)) and steps[0] == 1  # the failed segment's rows are superseded, not repeated


@pytest.mark.slow
def test_a_failed_segment_stores_its_traceback(run_tiny, tmp_path, monkeypatch):
    import json

    from harness.train.divergence import DivergenceMonitor

    def boom(self, trainer, *args):
        raise ValueError("bad batch")

    monkeypatch.setattr(DivergenceMonitor, "on_train_batch_end", boom)
    with pytest.raises(ValueError):
        run_tiny("boom")
    status, summary = db.connect(tmp_path / "results").execute(
        "SELECT status, summary FROM runs WHERE run_id = 'boom'").fetchone()
    summary = json.loads(summary)
    assert status == "failed" and summary["error"] == "ValueError: bad batch"
    assert "Traceback" in summary["traceback"] and "in boom" in summary["traceback"]


@pytest.mark.slow
def test_resume_of_a_run_checkpointed_at_its_last_step_but_never_closed_trains_it_again(run_tiny, tmp_path):
    whole, results = run_tiny("edge")
    for status in (results / "runs" / "edge" / "status").iterdir():
        status.unlink()  # as if killed during the final validation, after the last checkpoint
    again, _ = run_tiny("edge", resume=True)
    assert (again.status == "completed"
            and again.summary["final_train_loss"] == pytest.approx(whole.summary["final_train_loss"]))
    assert (db.connect(results).execute("SELECT status, n_segments FROM runs WHERE run_id = 'edge'").fetchone()
            == ("completed", 2))
