"""Archiving a run so its cell trains again: moved whole with its companions, nothing deleted, only a run with a
result, and a crash at any point completed by the next launch (a real process killed between the moves)."""

import hashlib
import json
import subprocess
import sys

import db
from db.archive import archive_root, archive_run, finish_archiving


def _files(root):
    """Every file under `root`: relative path → sha256 of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*") if p.is_file()}


def _unarchived(files):
    """The files as they were before run r's archiving moved them (its record left out)."""
    back = {"archive/r/0001/run/": "runs/r/", "archive/r/0001/checkpoints/": "checkpoints/r/"}
    for old, new in back.items():
        files = {path.replace(old, new): digest for path, digest in files.items()}
    return {path: digest for path, digest in files.items() if not path.endswith("why.json")}


def _run_with_checkpoints(results, run_id, status="completed"):
    writer = db.RunWriter.open(results, run_id, sweep="s", arm="a", seed=0)
    writer.log_metrics(3, {"val_loss": 2.0})
    if status is not None:
        writer.close(status)
    checkpoints = results / "checkpoints" / run_id
    checkpoints.mkdir(parents=True)
    (checkpoints / "step3-g0.ckpt").write_bytes(b"weights")
    return checkpoints


def test_a_run_and_its_checkpoints_move_whole_and_the_cell_has_no_run(results):
    checkpoints = _run_with_checkpoints(results, "r")
    _run_with_checkpoints(results, "other")
    before = _files(results)
    entry = archive_run(results, "r", {"checkpoints": checkpoints}, {"made_by": "old code"})
    assert entry == archive_root(results) / "r" / "0001"
    assert not (results / "runs" / "r").exists() and not checkpoints.exists()
    assert db.run_state(results, "r").exists is False
    assert [row[0] for row in db.connect(results).execute("SELECT run_id FROM runs").fetchall()] == ["other"]
    record = json.loads((entry / "why.json").read_text())
    assert record["made_by"] == "old code" and record["companions"] == {"checkpoints": "checkpoints/r"}
    assert _unarchived(_files(results)) == before  # every byte is still there, under the archive


def test_a_second_archive_of_the_same_key_takes_the_next_entry(results):
    archive_run(results, "r", {"checkpoints": _run_with_checkpoints(results, "r")}, {})
    assert archive_run(results, "r", {"checkpoints": _run_with_checkpoints(results, "r")}, {}).name == "0002"


def test_a_run_without_a_result_is_never_moved(results):
    checkpoints = _run_with_checkpoints(results, "r", status="interrupted")
    assert archive_run(results, "r", {"checkpoints": checkpoints}, {}) is None
    assert archive_run(results, "absent", {}, {}) is None
    assert checkpoints.exists() and db.run_state(results, "r").exists and not archive_root(results).exists()


CRASH = """
import os, sys
from pathlib import Path
import db.archive as archive
real = archive._move
def crashing(source, target):
    if target.name == {at!r}:
        os._exit(9)  # killed here: this move and everything after it never happen
    real(source, target)
archive._move = crashing
results = Path(sys.argv[1])
archive.archive_run(results, "r", {{"checkpoints": results / "checkpoints" / "r"}}, {{"made_by": "old code"}})
"""


def _crash_at(results, at):
    done = subprocess.run([sys.executable, "-c", CRASH.format(at=at), str(results)], capture_output=True, text=True)
    assert done.returncode == 9, done.stderr


def test_a_crash_between_the_moves_keeps_the_result_and_the_next_launch_completes_it(results):
    checkpoints = _run_with_checkpoints(results, "r")
    before = _files(results)
    _crash_at(results, "run")  # the checkpoints moved, the run not yet
    assert db.run_state(results, "r").result == "completed"  # still reused as before: no answer changed
    assert not checkpoints.exists()
    assert finish_archiving(results) == [archive_root(results) / "r" / "0001"]
    assert not (results / "runs" / "r").exists() and finish_archiving(results) == []
    assert _unarchived(_files(results)) == before


def test_a_crash_before_any_move_is_completed_too(results):
    _run_with_checkpoints(results, "r")
    _crash_at(results, "checkpoints")
    assert db.run_state(results, "r").result == "completed"
    finish_archiving(results)
    entry = archive_root(results) / "r" / "0001"
    assert sorted(p.name for p in entry.iterdir()) == ["checkpoints", "run", "why.json"]


def test_an_interrupted_archive_never_moves_another_run_of_the_same_key(results):
    _run_with_checkpoints(results, "r")
    _crash_at(results, "run")
    (results / "runs" / "r").rename(results / "elsewhere")  # the run left by other means; the key trained again
    _run_with_checkpoints(results, "r")
    assert finish_archiving(results) == []
    assert db.run_state(results, "r").result == "completed" and (results / "checkpoints" / "r").exists()
