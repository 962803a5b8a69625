import numpy as np
import pytest

import db


def test_metrics_layer_metrics_and_events_round_trip(results):
    with db.RunWriter.open(results, "r1") as writer:
        writer.log_metrics(0, {"train_loss": 3.5, "lr": np.float32(0.5)})
        writer.log_layer_metrics(0, "act_rms", np.array([1.0, 2.0, 3.0]))
        writer.log_layer_metrics(0, "max_logit", [[1, 2], [3, 4]])
        writer.log_layer_metrics(1, "max_logit", [np.array([5.0, 6.0]), np.array([7.0, 8.0])])
        writer.log_event(7, "loss_spike", 9.5, "7.1 sigma")
        writer.log_event(8, "checkpoint")
    con = db.connect(results)
    assert (con.sql("SELECT step, name, value FROM metrics ORDER BY name").fetchall()
            == [(0, "lr", 0.5), (0, "train_loss", 3.5)])
    assert con.sql("SELECT layer, head, value FROM layer_metrics WHERE name = 'act_rms' ORDER BY layer").fetchall() == [
        (0, None, 1.0), (1, None, 2.0), (2, None, 3.0)
    ]
    max_logits = "SELECT step, layer, head, value FROM layer_metrics WHERE name = 'max_logit' ORDER BY ALL"
    assert con.sql(max_logits).fetchall() == [
        (0, 0, 0, 1.0), (0, 0, 1, 2.0), (0, 1, 0, 3.0), (0, 1, 1, 4.0),
        (1, 0, 0, 5.0), (1, 0, 1, 6.0), (1, 1, 0, 7.0), (1, 1, 1, 8.0),
    ]
    assert con.sql("SELECT step, kind, value, detail FROM events ORDER BY step").fetchall() == [
        (7, "loss_spike", 9.5, "7.1 sigma"), (8, "checkpoint", None, None)
    ]


def test_flushes_every_flush_rows_into_new_shards(results):
    writer = db.RunWriter.open(results, "r1", flush_rows=10, flush_seconds=3600)
    for step in range(25):
        writer.log_metrics(step, {"loss": 1.0})
    assert writer.pending_rows == 5
    assert len(list((results / "runs" / "r1" / "metrics").glob("*.parquet"))) == 2
    writer.close()
    assert len(list((results / "runs" / "r1" / "metrics").glob("*.parquet"))) == 3
    assert db.connect(results).execute("SELECT count(*) FROM metrics").fetchone() == (25,)


def test_close_records_status_and_divergence(results, write_run):
    write_run(results, "ok")
    write_run(results, "boom", status="diverged", steps=20)
    rows = db.connect(results).sql("SELECT run_id, status, diverged_at_step, finished_at IS NOT NULL FROM runs ORDER "
                                   "BY run_id").fetchall()
    assert rows == [("boom", "diverged", 19, True), ("ok", "completed", None, True)]


def test_bad_status_names_the_valid_options(results):
    writer = db.RunWriter.open(results, "r1")
    with pytest.raises(ValueError,
                       match=r"status='done' is invalid; valid options: 'completed', 'diverged', 'pruned', 'failed', "
                       r"'interrupted'"):
        writer.close("done")
    with pytest.raises(ValueError, match="diverged_at_step=3 is only valid with status='diverged'"):
        writer.close("completed", diverged_at_step=3)
    writer.close("failed", summary={"error": "OOM"})
    with pytest.raises(db.DbError, match="closed"):
        writer.log_metrics(1, {"loss": 1.0})
    assert db.connect(results).execute("SELECT status, summary->>'error' FROM runs").fetchone() == ("failed", "OOM")


def test_exception_inside_with_block_closes_the_run_as_failed(results):
    with pytest.raises(RuntimeError):
        with db.RunWriter.open(results, "r1") as writer:
            writer.log_metrics(0, {"loss": 1.0})
            raise RuntimeError("nan in optimizer")
    status, error = db.connect(results).execute("SELECT status, summary->>'error' FROM runs").fetchone()
    assert status == "failed" and "nan in optimizer" in error


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"run_id": "a/b"}, "run_id='a/b' is invalid"),
        ({"run_id": "r", "resume": True}, "resume_from_step=None is invalid"),
        ({"run_id": "r", "resume_from_step": 5}, "only valid with resume=True"),
        ({"run_id": "r", "flush_rows": 0}, "flush_rows=0 is invalid"),
        ({"run_id": "r", "seed": "0"}, "seed='0' is invalid: expected int or None"),
        ({"run_id": "r", "flops_per_token": True}, "flops_per_token=True is invalid"),
    ],
)
def test_open_rejects_bad_arguments(results, kwargs, message):
    with pytest.raises(db.DbError, match=message):
        db.RunWriter.open(results, **kwargs)


def test_reopening_an_existing_run_needs_resume(results, write_run):
    write_run(results, "r1")
    with pytest.raises(db.DbError, match="already exists.*resume=True"):
        db.RunWriter.open(results, "r1")


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda w: w.log_metrics(-1, {"loss": 1.0}), "step=-1 is invalid"),
        (lambda w: w.log_metrics(1.5, {"loss": 1.0}), "step=1.5 is invalid"),
        (lambda w: w.log_metrics(1, {3: 1.0}), "metric names must be strings"),
        (lambda w: w.log_layer_metrics(1, None, [1.0]), "layer metric name=None is invalid"),
        (lambda w: w.log_event(1, ""), "event kind='' is invalid"),
    ],
)
def test_log_calls_reject_bad_input_before_buffering(results, call, message):
    writer = db.RunWriter.open(results, "r1")
    with pytest.raises(db.DbError, match=message):
        call(writer)
    assert writer.pending_rows == 0


def test_values_that_are_not_numbers_fail_at_the_log_call(results):
    writer = db.RunWriter.open(results, "r1")
    with pytest.raises(ValueError):
        writer.log_metrics(1, {"loss": "high"})
