"""One outcome per claim generation (db/outcomes.py): the slot goes to whichever comes first, the generation's own
close or a later generation's fence, and a status found in a slot is always published."""

import os

import pytest

import db
from db.outcomes import SupersededError, fence_earlier_claims, read_slot, slot_path


def test_a_claim_taken_over_refuses_the_earlier_close_before_the_taker_opens_anything(tmp_path):
    """The taker fences the moment it holds its claim (the worker calls fence_earlier_claims), long before its
    first segment opens: from then on the stalled writer's close is refused, rows included."""
    a = db.RunWriter.open(tmp_path, "r", claim=0)
    a.log_metrics(3, {"val_loss": 1.0})
    assert fence_earlier_claims(tmp_path, "r", 1) is None
    assert read_slot(slot_path(tmp_path / "runs" / "r", 0)).fenced_by == 1
    with pytest.raises(SupersededError, match="claim 0 was superseded by claim 1"):
        a.close("completed")
    assert not (tmp_path / "runs" / "r" / "metrics").exists()  # the refused writer flushed nothing
    assert db.run_state(tmp_path, "r").result is None
    with pytest.raises(db.DbError, match="closed"):
        a.log_metrics(4, {"val_loss": 1.0})


def test_a_close_cut_between_its_two_links_is_published_by_the_next_claimant(tmp_path):
    """A closer that died after winning its slot but before the status got its readable name: the result is
    the run's, and the next claim finds it, publishes it and opens nothing."""
    a = db.RunWriter.open(tmp_path, "r", claim=0)
    a.close("completed", summary={"checkpoint": "step0000010-g0.ckpt"})
    os.unlink(tmp_path / "runs" / "r" / "status" / "s0000.parquet")  # as if killed between the two links
    assert db.run_state(tmp_path, "r").result is None
    assert fence_earlier_claims(tmp_path, "r", 1) == "completed"
    assert db.run_state(tmp_path, "r").result == "completed"
    assert db.result_summary(tmp_path, "r") == {"checkpoint": "step0000010-g0.ckpt"}
    with pytest.raises(SupersededError, match="has a result"):
        db.RunWriter.open(tmp_path, "r", claim=1, resume=True, resume_from_step=0)
    assert db.connect(tmp_path).sql("SELECT status, n_segments FROM runs").fetchall() == [("completed", 1)]


def test_an_earlier_generations_interruption_is_kept_and_the_next_one_resumes(tmp_path):
    db.RunWriter.open(tmp_path, "r", claim=0).close("interrupted")
    os.unlink(tmp_path / "runs" / "r" / "status" / "s0000.parquet")
    writer = db.RunWriter.open(tmp_path, "r", claim=1, resume=True, resume_from_step=0)
    assert db.run_state(tmp_path, "r").statuses == {0: "interrupted"}  # published again by the fencing open
    writer.close("completed")
    assert db.connect(tmp_path).sql("SELECT status, n_segments FROM runs").fetchall() == [("completed", 2)]


def test_fencing_a_run_nobody_wrote_leaves_no_trace(tmp_path):
    assert fence_earlier_claims(tmp_path, "r", 3) is None
    assert not (tmp_path / "runs").exists()


def test_writers_outside_the_claim_protocol_use_no_slot(tmp_path):
    db.RunWriter.open(tmp_path, "r").close("failed")
    db.RunWriter.open(tmp_path, "r", resume=True, resume_from_step=0).close("completed")
    assert not (tmp_path / "runs" / "r" / "outcomes").exists()
    assert db.run_state(tmp_path, "r").statuses == {0: "failed", 1: "completed"}
