"""Which segments count (docs/internals.md, "Fencing and final results"): the views and `db.run_state` read the
same segments, and a result cannot be hidden or changed by anything appended after it."""

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import db
from db.segments import Segment, counting_segments

END = st.sampled_from([None, "completed", "diverged", "pruned", "failed", "interrupted"])


def _write(results, run_id, history):
    """Each (claim, end, start_step) as one segment with a train_loss row per step from its start step."""
    for number, (claim, end, start) in enumerate(history):
        writer = db.RunWriter.open(results, run_id, resume=number > 0, resume_from_step=start if number else None,
                                   claim=claim)
        for step in range(start, start + 3):
            writer.log_metrics(step, {"train_loss": 100.0 * number + step})
        if end is None:
            writer.flush()  # no status: a writer that stopped writing (it lost its claim, or it died)
        else:
            writer.close(end)


def test_a_segment_opened_after_the_result_by_a_fenced_writer_changes_nothing(tmp_path):
    """The review's case 1: A (claim 0) stalls, B (claim 1) completes the cell, A wakes and opens a segment."""
    _write(tmp_path, "cell", [(1, "completed", 0), (0, "interrupted", 0)])
    _write(tmp_path, "failed-late", [(1, "completed", 0), (0, "failed", 0)])
    con = db.connect(tmp_path)
    rows = con.sql("SELECT run_id, status, n_segments, final_train_loss, last_step FROM runs ORDER BY run_id").fetchall()
    assert rows == [("cell", "completed", 1, 2.0, 2), ("failed-late", "completed", 1, 2.0, 2)]
    assert con.sql("SELECT count(*) FROM metrics WHERE value >= 100").fetchall() == [(0,)]  # none of A's rows
    state = db.run_state(tmp_path, "cell")
    assert (state.result, state.segments, state.opened, state.failures) == ("completed", (0,), (0, 1), 0)


def test_a_result_is_final_even_for_a_writer_of_the_live_generation(tmp_path):
    _write(tmp_path, "r", [(0, "completed", 0), (0, "failed", 0), (1, "interrupted", 0)])
    assert db.connect(tmp_path).sql("SELECT status, n_segments, last_step FROM runs").fetchall() == [("completed", 1, 2)]
    assert db.run_state(tmp_path, "r").result == "completed"


def test_a_taker_resuming_mid_run_hides_the_stalled_writers_later_rows(tmp_path):
    """The stalled writer A (claim 0) logged steps 0-2; B (claim 1) resumed at step 1 and completed."""
    _write(tmp_path, "r", [(0, None, 0), (1, "completed", 1)])
    con = db.connect(tmp_path)
    assert con.sql("SELECT step, value FROM metrics ORDER BY step").fetchall() == [(0, 0.0), (1, 101.0), (2, 102.0), (3, 103.0)]
    assert con.sql("SELECT status, n_segments FROM runs").fetchall() == [("completed", 2)]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 3)), END, st.integers(0, 4)), min_size=1, max_size=5))
def test_the_views_and_run_state_count_the_same_segments(tmp_path_factory, history):
    results = tmp_path_factory.mktemp("store")
    _write(results, "r", history)
    # The oracle: the rule written out directly over the history.
    expected, highest = [], None
    for number, (claim, end, _) in enumerate(history):
        if claim is not None and highest is not None and claim < highest:
            highest = max(highest, claim)
            continue
        highest = claim if highest is None or (claim is not None and claim > highest) else highest
        expected.append(number)
        if end in ("completed", "diverged", "pruned"):
            break
    assert [s.number for s in counting_segments(Segment(n, c, e) for n, (c, e, _) in enumerate(history))] == expected
    state = db.run_state(results, "r")
    assert list(state.segments) == expected
    last_end = history[expected[-1]][1]
    con = db.connect(results)
    status, n_segments = con.sql("SELECT status, n_segments FROM runs").fetchall()[0]
    assert n_segments == len(expected)
    assert status == (last_end or "running")
    assert state.last_status == last_end
    hidden_segments = set(range(len(history))) - set(expected)
    shown = {int(v) // 100 for (v,) in con.sql("SELECT value FROM metrics").fetchall()}
    assert not shown & hidden_segments


def test_a_store_written_before_fencing_reads_as_before(tmp_path):
    """Manifests without the claim column (written before fencing): every segment counts up to the first result."""
    _write(tmp_path, "r", [(None, "failed", 0), (None, "interrupted", 0), (None, "completed", 0), (None, "failed", 0)])
    for path in (tmp_path / "runs" / "r" / "manifest").glob("*.parquet"):
        table = pq.ParquetFile(path).read()
        pq.write_table(table.drop_columns(["claim"]), path)  # the schema metadata (our version stamp) stays
    assert "claim" not in pq.ParquetFile(path).schema_arrow.names
    assert db.connect(tmp_path).sql("SELECT status, n_segments FROM runs").fetchall() == [("completed", 3)]
    state = db.run_state(tmp_path, "r")
    assert (state.segments, state.failures, state.result) == ((0, 1, 2), 1, "completed")
