"""A sweep's labels file: tags and archive state read back as written, changed under a lock (concurrent changes all
kept), bad tags refused, a damaged file named and left as it is, and a replaced plan keeps its sweep's labels."""

import json
import multiprocessing

import pytest

import db
from db.labels import Labels, every_label, labels_path, read_labels, relabel


def test_a_sweep_without_a_labels_file_has_no_tags_and_is_shown(tmp_path):
    assert read_labels(tmp_path, "s") == Labels()


def test_tags_and_the_archive_state_are_written_and_read_back(tmp_path):
    assert relabel(tmp_path, "s", add=["paper", "qk/v2", "paper"]) == Labels(("paper", "qk/v2"), False)
    assert relabel(tmp_path, "s", remove=["paper"], archived=True) == Labels(("qk/v2",), True)
    assert relabel(tmp_path, "s", add=["b"]) == Labels(("b", "qk/v2"), True)  # the archive state kept when not given
    assert json.loads(labels_path(tmp_path, "s").read_text()) == {"tags": ["b", "qk/v2"], "archived": True}
    assert read_labels(tmp_path, "s") == Labels(("b", "qk/v2"), True)


@pytest.mark.parametrize("tag", ["", "has space", "-lead", "x" * 41, "a,b"])
def test_a_bad_tag_is_refused_and_nothing_is_written(tmp_path, tag):
    with pytest.raises(db.DbError, match="is invalid: use 1-40 characters"):
        relabel(tmp_path, "s", add=[tag])
    assert not labels_path(tmp_path, "s").exists()


def test_a_damaged_labels_file_is_named_and_left_as_it_is(tmp_path):
    relabel(tmp_path, "ok", add=["a"])
    path = labels_path(tmp_path, "bad")
    path.parent.mkdir(parents=True)
    path.write_text('{"tags": "not a list", "archived": false}')
    with pytest.raises(db.DbError, match="labels.json is damaged"):
        relabel(tmp_path, "bad", add=["x"])
    assert path.read_text() == '{"tags": "not a list", "archived": false}'
    labels, damaged = every_label(tmp_path)
    assert labels == {"ok": Labels(("a",))} and len(damaged) == 1 and "sweeps/bad/labels.json is damaged" in damaged[0]


def _add_tags(results, worker: int) -> None:
    for i in range(15):
        relabel(results, "s", add=[f"w{worker}-{i}"])


def test_changes_made_at_once_by_several_processes_are_all_kept(tmp_path):
    processes = [multiprocessing.get_context("fork").Process(target=_add_tags, args=(tmp_path, w)) for w in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert len(read_labels(tmp_path, "s").tags) == 60


def test_replacing_a_plan_keeps_its_labels(tmp_path):
    db.write_sweep(tmp_path, "s", {"question": "q"}, [{"arm": "a", "lr": 1e-3, "seed": 0, "run_id": "r0"}])
    relabel(tmp_path, "s", add=["keep"], archived=True)
    db.archive_plan(tmp_path, "s")
    assert read_labels(tmp_path, "s") == Labels(("keep",), True)
