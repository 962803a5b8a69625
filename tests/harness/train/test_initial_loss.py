"""The loss at initialization (`initial_loss`, step 0): written by every fresh run whatever `log_every` is,
equal to the step-1 `train_loss` of the same run logged every step (an independent run is the oracle), and
kept by a resumed run's summary without being written twice."""

import pytest

import db


def query(results, sql, *params):
    return db.connect(results).execute(sql, list(params)).fetchall()


def step_one_loss(results, run_id):
    """The oracle: step 1's `train_loss` as a log_every=1 run logged it."""
    ((value,),) = query(results, "SELECT value FROM metrics WHERE run_id = ? AND name = 'train_loss' AND step = 1",
                        run_id)
    return value


def initial_loss_rows(results, run_id):
    return query(results, "SELECT step, value FROM metrics WHERE run_id = ? AND name = 'initial_loss'", run_id)


@pytest.mark.slow
def test_initial_loss_is_written_at_step_0_whatever_log_every_is(run_tiny):
    # grad_accum=2: the value is the mean over step 1's micro-batches, as train_loss is.
    run_tiny("every", log_every=1, grad_accum=2)
    sparse, results = run_tiny("sparse", log_every=10, grad_accum=2)
    oracle = step_one_loss(results, "every")
    assert [s for (s,) in query(results,
                                "SELECT step FROM metrics WHERE run_id = 'sparse' AND name = 'train_loss'")] == [8]
    ((step, value),) = initial_loss_rows(results, "sparse")
    assert step == 0 and value == pytest.approx(oracle, rel=1e-6)
    assert sparse.summary["initial_loss"] == pytest.approx(oracle, rel=1e-6)
    # With every step logged the first logged loss is the initial loss; with sparse logging it is not.
    assert (query(results, "SELECT value FROM metrics WHERE run_id = 'sparse' AND name = 'train_loss'")[0][0]
            != pytest.approx(oracle))


class Crash(Exception):
    pass


@pytest.mark.slow
def test_a_resumed_run_keeps_its_initial_loss_and_writes_it_once(run_tiny, monkeypatch):
    _, results = run_tiny("whole", log_every=1)
    from harness.train.divergence import DivergenceMonitor

    original = DivergenceMonitor.on_train_batch_end

    def crash_at_step_6(self, trainer, *args):
        original(self, trainer, *args)
        if trainer.global_step == 6:
            raise Crash  # after the step-4 checkpoint: the resumed segment starts at step 5

    monkeypatch.setattr(DivergenceMonitor, "on_train_batch_end", crash_at_step_6)
    with pytest.raises(Crash):
        run_tiny("crashed", log_every=3)
    monkeypatch.undo()
    resumed, _ = run_tiny("crashed", resume=True, log_every=3)
    assert query(results, "SELECT status, n_segments FROM runs WHERE run_id = 'crashed'") == [("completed", 2)]
    oracle = step_one_loss(results, "whole")
    assert resumed.summary["initial_loss"] == pytest.approx(oracle, rel=1e-6)
    ((step, value),) = initial_loss_rows(results, "crashed")
    assert step == 0 and value == pytest.approx(oracle, rel=1e-6)
