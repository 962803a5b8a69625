"""Provenance in the store: the manifest columns, the `runs` view's code columns (old stores show NULL), which
results other code made, and the one-line summary compare and the report print."""

import pyarrow.parquet as pq
import pytest

import db
from db.compact import compact
from db.paths import run_dir
from db.provenance import PROVENANCE_COLUMNS, Code, code_summary, finished_code_summary, other_code_results, run_codes

A = {"harness_version": "0.1.0", "git_commit": "a" * 40, "git_dirty": False, "torch_version": "2.13.0",
     "lightning_version": "2.6.6", "python_version": "3.11.7", "device_name": "cpu", "trainer_precision": "32-true"}
B = {**A, "git_commit": "b" * 40, "git_dirty": True}
CODE_A, CODE_B = Code("0.1.0", "a" * 40, False), Code("0.1.0", "b" * 40, True)
CODE_COLUMNS = "harness_version, git_commit, git_dirty, code_versions, torch_version, device_name, trainer_precision"


def _segment(results, run_id, status, provenance=None, resume=False, **identity):
    writer = db.RunWriter.open(results, run_id, provenance=provenance, resume=resume,
                               resume_from_step=0 if resume else None, **identity)
    writer.log_metrics(1, {"val_loss": 2.0})
    if status is not None:
        writer.close(status)


def _strip_provenance(results, run_id):
    """Rewrite the run's manifests as the writer wrote them before provenance existed (no such columns)."""
    for path in (run_dir(results, run_id) / "manifest").iterdir():
        table = pq.read_table(path)
        old = table.drop_columns(list(PROVENANCE_COLUMNS)).replace_schema_metadata(table.schema.metadata)
        pq.write_table(old, path)


def _code_rows(results):
    return db.connect(results).execute(f"SELECT run_id, {CODE_COLUMNS} FROM runs ORDER BY run_id").fetchall()


def test_a_segment_records_its_provenance_and_runs_shows_it(results):
    _segment(results, "r", "completed", A, sweep="s")
    assert _code_rows(results) == [("r", "0.1.0", "a" * 40, False, 1, "2.13.0", "cpu", "32-true")]


@pytest.mark.parametrize("compacted", [False, True])
def test_a_store_from_before_provenance_shows_null(results, compacted):
    _segment(results, "old", "completed", sweep="s")
    _strip_provenance(results, "old")
    _segment(results, "new", "completed", A, sweep="s")
    assert "git_commit" not in pq.read_table(results / "runs" / "old" / "manifest" / "s0000.parquet").column_names
    if compacted:  # the catalog index then holds the old rows
        compact(results)
    assert _code_rows(results) == [("new", "0.1.0", "a" * 40, False, 1, "2.13.0", "cpu", "32-true"),
                                   ("old", *[None] * 7)]
    assert run_codes(results, "old") == (Code(),)


def test_a_store_with_only_old_runs_has_the_columns_too(results):
    _segment(results, "old", "completed")
    _strip_provenance(results, "old")
    assert _code_rows(results) == [("old", *[None] * 7)]


def test_a_run_resumed_under_other_code_shows_the_last_recorded_code_and_counts_both(results):
    _segment(results, "r", "interrupted", A, sweep="s")
    _segment(results, "r", "failed", B, resume=True)
    _segment(results, "r", "completed", None, resume=True)  # e.g. a worker's failure record: nothing recorded
    assert _code_rows(results) == [("r", "0.1.0", "b" * 40, True, 2, "2.13.0", "cpu", "32-true")]
    assert run_codes(results, "r") == (CODE_A, CODE_B)


def test_a_segment_after_the_result_adds_no_code(results):
    _segment(results, "r", "completed", A, sweep="s")
    _segment(results, "r", "completed", B, resume=True)  # a late writer: the result is final (db/segments.py)
    assert _code_rows(results)[0][1:5] == ("0.1.0", "a" * 40, False, 1)
    assert run_codes(results, "r") == (CODE_A,)


@pytest.mark.parametrize("provenance, message", [
    ({"git_sha": "x"}, "provenance names no column 'git_sha'"),
    ({"git_dirty": "yes"}, "provenance git_dirty='yes' is invalid: expected bool or None"),
    ({"torch_version": 2.13}, "provenance torch_version=2.13 is invalid: expected str or None"),
])
def test_bad_provenance_is_refused_before_the_run_exists(results, provenance, message):
    with pytest.raises(db.DbError, match=message):
        db.RunWriter.open(results, "r", provenance=provenance)
    assert not (results / "runs" / "r").exists()


def test_other_code_results_are_those_some_other_or_unrecorded_code_made(results):
    _segment(results, "same", "completed", A)
    _segment(results, "other", "diverged", B)
    _segment(results, "unrecorded", "completed")
    _segment(results, "mixed", "interrupted", B)
    _segment(results, "mixed", "completed", A, resume=True)
    _segment(results, "unfinished", "interrupted", B)
    changed = other_code_results(results, ["same", "other", "unrecorded", "mixed", "unfinished", "absent"], CODE_A)
    assert changed == {"other": (CODE_B,), "unrecorded": (Code(),), "mixed": (CODE_B, CODE_A)}


@pytest.mark.parametrize("rows, line", [
    ([A, A], "code: harness 0.1.0 @ aaaaaaa (clean), torch 2.13.0, cpu"),
    ([B], "code: harness 0.1.0 @ bbbbbbb (dirty), torch 2.13.0, cpu"),
    ([{**A, "git_commit": None, "git_dirty": None, "device_name": "NVIDIA H200"}],
     "code: harness 0.1.0 (not a git checkout), torch 2.13.0, NVIDIA H200"),
    ([A, B, A, {}], "code: the 4 runs mix code versions: 2 by harness 0.1.0 @ aaaaaaa (clean), "
                    "1 by harness 0.1.0 @ bbbbbbb (dirty), 1 by unrecorded code; torch 2.13.0, cpu"),
    ([A, {**B, "code_versions": 2}, {**A, "torch_version": "2.12.1"}],
     "code: the 3 runs mix code versions: 2 by harness 0.1.0 @ aaaaaaa (clean), 1 by several (resumed under other "
     "code); torch 2.13.0 / 2.12.1, cpu"),
    ([{}, {}], None),  # nothing recorded (a store from before provenance): nothing to say
    ([], None),
])
def test_code_summary_names_the_code_and_counts_mixed_versions(rows, line):
    assert code_summary(rows) == line


def test_finished_code_summary_reads_the_finished_runs_of_a_relation(results):
    _segment(results, "a", "completed", A, sweep="s")
    _segment(results, "b", "diverged", B, sweep="s")
    _segment(results, "running", None, B, sweep="s")
    _segment(results, "failed", "failed", B, sweep="s")
    assert finished_code_summary(db.connect(results), "runs") == (
        "code: the 2 runs mix code versions: 1 by harness 0.1.0 @ aaaaaaa (clean), 1 by harness 0.1.0 @ bbbbbbb "
        "(dirty); torch 2.13.0, cpu")
