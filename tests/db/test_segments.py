"""Which segments count (docs/internals.md, "Fencing and final results"): the views and `db.run_state` read the
same segments, a result is final by claim generation, and the writers refuse a superseded writer's late status.

Histories are written two ways: through today's `db.RunWriter` (which fences earlier generations and refuses
what db/outcomes.py refuses), and as a store written before outcome slots existed (`legacy`: manifests and
statuses published straight, so a superseded writer's late status may be there), which the rule must still
answer by generation."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import db
from db.outcomes import SupersededError
from db.paths import segment_shard_name
from db.segments import Segment, counting_segments

RESULTS = ("completed", "diverged", "pruned")
END = st.sampled_from([None, "completed", "diverged", "pruned", "failed", "interrupted"])
WRITER = st.tuples(st.one_of(st.none(), st.integers(0, 3)), END, st.integers(0, 4), st.booleans(), st.integers(0, 3))


def _legacy_open(results, run_id, start, claim):
    """A segment opened as writers did before outcome slots: no fencing, the claim only recorded in the manifest;
    its status is published straight (a writer with no claim of today's kind)."""
    number = len(db.run_state(results, run_id).opened)
    writer = db.RunWriter.open(results, run_id, resume=number > 0, resume_from_step=start if number else None)
    path = writer.path / "manifest" / segment_shard_name(writer.segment)
    table = pq.ParquetFile(path).read()
    column = table.schema.get_field_index("claim")
    pq.write_table(table.set_column(column, "claim", pa.array([claim], pa.int64())), path)  # keeps our version stamp
    return writer


def _open(results, run_id, claim, start, legacy):
    """A writer of a new segment (a resume when the run exists), logging train_loss at 3 steps from `start`."""
    number = len(db.run_state(results, run_id).opened)
    if legacy:
        writer = _legacy_open(results, run_id, start, claim)
    else:
        writer = db.RunWriter.open(results, run_id, resume=number > 0, resume_from_step=start if number else None,
                                   claim=claim)
    for step in range(start, start + 3):
        writer.log_metrics(step, {"train_loss": 100.0 * writer.segment + step})
    writer.flush()
    return writer


def _write(results, run_id, history):
    """Each (claim, end, start, legacy) in order, opened and closed at once (None: it stopped writing)."""
    for claim, end, start, legacy in history:
        writer = _open(results, run_id, claim, start, legacy)
        if end is not None:
            writer.close(end)


def test_a_superseded_writers_late_result_is_refused_and_the_live_generations_result_stands(tmp_path):
    """The issue's four lines: A (claim 0) logs val_loss 1.0; B (claim 1, resumed) logs 2.0 and completes; A then
    closes completed."""
    a = db.RunWriter.open(tmp_path, "r", claim=0)
    a.log_metrics(10, {"val_loss": 1.0})
    b = db.RunWriter.open(tmp_path, "r", claim=1, resume=True, resume_from_step=5)
    b.log_metrics(10, {"val_loss": 2.0})
    b.close("completed")
    with pytest.raises(SupersededError, match="status 'completed' not recorded: claim 0 was superseded by claim 1"):
        a.close("completed")
    rows = db.connect(tmp_path).sql("SELECT status, final_val_loss, n_segments FROM runs").fetchall()
    assert rows == [("completed", 2.0, 2)]
    state = db.run_state(tmp_path, "r")
    assert (state.result, state.result_segment, sorted(state.statuses)) == ("completed", 1, [1])
    assert sorted(p.name for p in (tmp_path / "runs" / "r" / "status").iterdir()) == ["s0001.parquet"]


def test_the_same_late_result_in_a_store_written_before_the_refusal_loses_to_the_later_generation(tmp_path):
    """What the store held before outcome slots, read by today's rule: A's late result does not stand."""
    a = _legacy_open(tmp_path, "r", 0, claim=0)
    a.log_metrics(10, {"val_loss": 1.0})
    b = _legacy_open(tmp_path, "r", 5, claim=1)
    b.log_metrics(10, {"val_loss": 2.0})
    b.close("completed")
    a.close("completed")  # published straight, as the old writer did
    rows = db.connect(tmp_path).sql("SELECT status, final_val_loss, n_segments FROM runs").fetchall()
    assert rows == [("completed", 2.0, 2)]
    assert (db.run_state(tmp_path, "r").result_segment, db.result_summary(tmp_path, "r")) == (1, {})


def test_a_segment_opened_after_the_result_by_a_fenced_writer_changes_nothing(tmp_path):
    """A (claim 0) stalls, B (claim 1) completes the cell, A wakes and opens a segment: refused today; in an
    older store, where it was written, ignored."""
    _write(tmp_path, "cell", [(1, "completed", 0, False)])
    with pytest.raises(SupersededError, match="claim 0 opens no segment: claim 0 was superseded by claim 1"):
        db.RunWriter.open(tmp_path, "cell", resume=True, resume_from_step=0, claim=0)
    _write(tmp_path, "legacy", [(1, "completed", 0, True), (0, "interrupted", 0, True)])
    _write(tmp_path, "failed-late", [(1, "completed", 0, True), (0, "failed", 0, True)])
    con = db.connect(tmp_path)
    rows = con.sql("SELECT run_id, status, n_segments, final_train_loss, last_step FROM runs "
                   "ORDER BY run_id").fetchall()
    assert rows == [("cell", "completed", 1, 2.0, 2), ("failed-late", "completed", 1, 2.0, 2),
                    ("legacy", "completed", 1, 2.0, 2)]
    assert con.sql("SELECT count(*) FROM metrics WHERE value >= 100").fetchall() == [(0,)]  # none of A's rows
    state = db.run_state(tmp_path, "legacy")
    assert (state.result, state.segments, state.opened, state.failures) == ("completed", (0,), (0, 1), 0)


def test_a_later_generation_opens_no_segment_once_an_earlier_one_holds_the_result(tmp_path):
    """B (claim 1) checked for a result before A (claim 0) recorded one, then opens: refused, so the result stays."""
    _write(tmp_path, "r", [(0, "completed", 0, False)])
    with pytest.raises(SupersededError, match="has a result \\(completed\\) from an earlier claim"):
        db.RunWriter.open(tmp_path, "r", resume=True, resume_from_step=0, claim=1)
    assert db.connect(tmp_path).sql("SELECT status, n_segments FROM runs").fetchall() == [("completed", 1)]


def test_a_result_is_final_even_for_a_writer_of_the_live_generation(tmp_path):
    _write(tmp_path, "r", [(0, "completed", 0, True), (0, "failed", 0, True), (1, "interrupted", 0, True)])
    assert (db.connect(tmp_path).sql("SELECT status, n_segments, last_step FROM runs").fetchall()
            == [("completed", 1, 2)])
    assert db.run_state(tmp_path, "r").result == "completed"
    with pytest.raises(SupersededError, match="claim 0 already closed segment 0"):  # today: one outcome a generation
        _write(tmp_path, "today", [(0, "completed", 0, False), (0, "failed", 0, False)])


def test_a_taker_resuming_mid_run_hides_the_stalled_writers_later_rows(tmp_path):
    """The stalled writer A (claim 0) logged steps 0-2; B (claim 1) resumed at step 1 and completed."""
    _write(tmp_path, "r", [(0, None, 0, False), (1, "completed", 1, False)])
    con = db.connect(tmp_path)
    assert (con.sql("SELECT step, value FROM metrics ORDER BY step").fetchall()
            == [(0, 0.0), (1, 101.0), (2, 102.0), (3, 103.0)])
    assert con.sql("SELECT status, n_segments FROM runs").fetchall() == [("completed", 2)]


def _events(writers):
    """Open and close events of the writers: writer i closes after writer i + delay has opened (a late close)."""
    events = []
    for i in range(len(writers)):
        events.append(("open", i))
        events += [("close", j) for j, w in enumerate(writers) if min(j + w[4], len(writers) - 1) == i]
    return events


def _expected_store(writers, events):
    """The oracle of the writers' protocol (db/outcomes.py) written out: which events are refused, and what the
    store then holds: (number, claim, status) per segment."""
    slots, numbers, segments, refused = {}, {}, [], set()
    for kind, i in events:
        claim, end, _, legacy, _ = writers[i]
        fenced = claim is not None and not legacy
        if kind == "open":
            if fenced:
                earlier = [slots.setdefault(g, "fenced") for g in range(claim)]
                if any(outcome in RESULTS for outcome in earlier) or claim in slots:
                    refused.add((kind, i))
                    continue
            numbers[i] = len(segments)
            segments.append([numbers[i], claim, None])
        elif i in numbers and end is not None:
            if fenced and claim in slots:
                refused.add((kind, i))
                continue
            if fenced:
                slots[claim] = end
            segments[numbers[i]][2] = end
    return refused, [tuple(s) for s in segments]


def _expected_counting(segments):
    """The rule written out: (a) drop a segment opened after a higher generation; (b) stop at the first result
    that no later (kept) result of a higher generation supersedes."""
    kept, highest = [], None
    for number, claim, status in segments:
        if claim is not None and highest is not None and claim < highest:
            continue
        highest = claim if claim is not None and (highest is None or claim > highest) else highest
        kept.append((number, claim, status))
    for i, (number, claim, status) in enumerate(kept):
        later = [c for _, c, s in kept[i + 1:] if c is not None and s in RESULTS]
        if status in RESULTS and (claim is None or not later or max(later) <= claim):
            return [n for n, _, _ in kept[: i + 1]]
    return [n for n, _, _ in kept]


def _play(results, writers, events):
    """Run the events through the real writers; returns the refused ones and each event's run result seen after it."""
    open_writers, refused, seen = {}, set(), []
    for kind, i in events:
        claim, end, start, legacy, _ = writers[i]
        try:
            if kind == "open":
                open_writers[i] = _open(results, "r", claim, start, legacy)
            elif i in open_writers and end is not None:
                open_writers[i].close(end)
        except SupersededError:
            refused.add((kind, i))
        state = db.run_state(results, "r")
        seen.append((state.result, state.result_segment))
    return refused, seen


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(WRITER, min_size=1, max_size=5))
def test_the_views_and_run_state_count_the_same_segments(tmp_path_factory, writers):
    results = tmp_path_factory.mktemp("store")
    events = _events(writers)
    refused, seen = _play(results, writers, events)
    expected_refused, segments = _expected_store(writers, events)
    assert refused == expected_refused
    if not segments:
        return
    expected = _expected_counting(segments)
    assert [s.number for s in counting_segments(Segment(*s) for s in segments)] == expected
    state = db.run_state(results, "r")
    assert list(state.segments) == expected
    last_end = segments[expected[-1]][2]
    con = db.connect(results)
    status, n_segments = con.sql("SELECT status, n_segments FROM runs").fetchall()[0]
    assert n_segments == len(expected)
    assert status == (last_end or "running")
    assert state.last_status == last_end
    hidden_segments = set(range(len(segments))) - set(expected)
    shown = {int(v) // 100 for (v,) in con.sql("SELECT value FROM metrics").fetchall()}
    assert not shown & hidden_segments
    if all(w[0] is not None and not w[3] for w in writers):  # today's claimed writers: a result never changes
        # (writers outside the claim protocol are one at a time per run, as `harness run` is: nothing fences them)
        first = next((i for i, (result, _) in enumerate(seen) if result is not None), len(seen))
        assert all(after == seen[first] for after in seen[first:]), seen


def test_a_store_written_before_fencing_reads_as_before(tmp_path):
    """Manifests without the claim column (written before fencing): every segment counts up to the first result."""
    _write(tmp_path, "r", [(None, "failed", 0, False), (None, "interrupted", 0, False), (None, "completed", 0, False),
                           (None, "failed", 0, False)])
    for path in (tmp_path / "runs" / "r" / "manifest").glob("*.parquet"):
        table = pq.ParquetFile(path).read()
        pq.write_table(table.drop_columns(["claim"]), path)  # the schema metadata (our version stamp) stays
    assert "claim" not in pq.ParquetFile(path).schema_arrow.names
    assert db.connect(tmp_path).sql("SELECT status, n_segments FROM runs").fetchall() == [("completed", 3)]
    state = db.run_state(tmp_path, "r")
    assert (state.segments, state.failures, state.result) == ((0, 1, 2), 1, "completed")
