import os
import shutil

import pandas
import pytest

import db
from db.compact import compact

RUNS = "SELECT run_id, status, seed, d_model, final_val_loss, last_step, n_segments FROM runs ORDER BY run_id"


def _rewrite_keeping_size_and_mtime(path, data):
    stat = path.stat()
    path.write_bytes(data)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_connect_after_compact_takes_manifests_from_the_index(results, write_run):
    write_run(results, "r1", config={"d_model": 64})
    write_run(results, "r2", seed=2, config={"d_model": 128})
    before = db.connect(results).sql(RUNS).fetchall()
    compact(results)
    manifest = results / "runs" / "r1" / "manifest" / "s0000.parquet"
    _rewrite_keeping_size_and_mtime(manifest, b"x" * manifest.stat().st_size)  # unreadable, yet unchanged by stat
    assert db.connect(results).sql(RUNS).fetchall() == before


def test_runs_started_resumed_or_finished_after_the_index_still_show(results, write_run):
    write_run(results, "done", status="interrupted")
    running = db.RunWriter.open(results, "later-finished")
    compact(results)
    write_run(results, "new")
    running.close("diverged", diverged_at_step=3)
    resumed = db.RunWriter.open(results, "done", resume=True, resume_from_step=30)
    resumed.log_metrics(30, {"val_loss": 1.0})
    resumed.flush()
    rows = db.connect(results).execute("SELECT run_id, status, n_segments, final_val_loss FROM runs "
                                       "ORDER BY run_id").fetchall()
    assert rows == [("done", "running", 2, 1.0), ("later-finished", "diverged", 1, None), ("new", "completed", 1, 2.7)]


def test_a_changed_shard_is_read_from_disk_not_from_the_stale_index(results, write_run):
    write_run(results, "r1", sweep="old")
    compact(results)
    write_run(results, "donor", sweep="new")
    manifest = results / "runs" / "r1" / "manifest" / "s0000.parquet"
    manifest.write_bytes((results / "runs" / "donor" / "manifest" / "s0000.parquet").read_bytes())
    with pytest.warns(db.CorruptShardWarning, match="holds run 'donor' segment 0, not 'r1' 0"):
        con = db.connect(results)
    # r1's path now holds donor's row: checked afresh (the index's old row is not used), and named as damaged
    assert con.execute("SELECT run_id, sweep FROM _manifests ORDER BY ALL").fetchall() == [("donor", "new")]
    assert con.execute("SELECT path, run_id FROM store_damage").fetchall() == [("runs/r1/manifest/s0000.parquet", "r1")]


def test_a_run_deleted_after_the_index_disappears(results, write_run):
    write_run(results, "kept")
    write_run(results, "deleted")
    compact(results)
    shutil.rmtree(results / "runs" / "deleted")
    assert db.connect(results).execute("SELECT run_id FROM runs").fetchall() == [("kept",)]


def test_damaged_index_is_ignored_with_a_warning(results, write_run):
    write_run(results, "r1")
    compact(results)
    (results / "index" / "manifest.parquet").write_bytes(b"garbage")
    with pytest.warns(db.CorruptShardWarning, match="ignoring index"):
        con = db.connect(results)
    assert con.execute("SELECT run_id, status FROM runs").fetchall() == [("r1", "completed")]


def test_engine_reads_through_the_index(results, write_run):
    write_run(results, "r1")
    compact(results)
    assert pandas.read_sql("SELECT run_id, status FROM runs", db.engine(results)).to_dict("records") == [
        {"run_id": "r1", "status": "completed"}
    ]
