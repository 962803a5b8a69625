import os
import signal
import socket
import subprocess
import sys
import threading
import time

import pyarrow.parquet as pq
import pytest

import db
from db.compact import compact

ALL_ROWS = "SELECT run_id, step, name, value FROM metrics ORDER BY ALL"


def _run_with_many_shards(results, run_id, close=True):
    writer = db.RunWriter.open(results, run_id, flush_rows=10)
    for step in range(95):
        writer.log_metrics(step, {"loss": float(step)})
        writer.log_layer_metrics(step, "rms", [1.0] * 4)
    if close:
        writer.close()
    else:
        writer.flush()


def _files(results, run_id, table="metrics"):
    return sorted(p.name for p in (results / "runs" / run_id / table).glob("*.parquet"))


def test_compact_merges_finished_segments_without_losing_rows(results):
    _run_with_many_shards(results, "done")
    _run_with_many_shards(results, "live", close=False)
    before = db.connect(results).sql(ALL_ROWS).fetchall()
    layers_before = db.connect(results).execute("SELECT count(*) FROM layer_metrics").fetchone()
    assert len(_files(results, "done")) > 5
    live_files = _files(results, "live")
    assert compact(results) == 1
    assert len(_files(results, "done")) == 1 and len(_files(results, "done", "layer_metrics")) == 1
    assert _files(results, "live") == live_files  # a running writer's shards are left alone
    assert db.connect(results).sql(ALL_ROWS).fetchall() == before
    assert db.connect(results).execute("SELECT count(*) FROM layer_metrics").fetchone() == layers_before
    assert compact(results) == 0


def test_interrupted_compact_shows_no_duplicates_and_is_finished_next_time(results):
    _run_with_many_shards(results, "done")
    before = db.connect(results).sql(ALL_ROWS).fetchall()
    metrics_dir = results / "runs" / "done" / "metrics"
    originals = {p.name: p.read_bytes() for p in metrics_dir.glob("*.parquet")}
    compact(results)
    for name, data in originals.items():  # as if the compact died after publishing, before deleting
        (metrics_dir / name).write_bytes(data)
    assert db.connect(results).sql(ALL_ROWS).fetchall() == before
    compact(results)
    assert len(_files(results, "done")) == 1
    assert db.connect(results).sql(ALL_ROWS).fetchall() == before


def test_compact_deletes_only_old_temp_files_of_killed_writers(results):
    _run_with_many_shards(results, "done")
    metrics_dir = results / "runs" / "done" / "metrics"
    old, young = metrics_dir / ".s0000-000099.parquet.tmp-1", metrics_dir / ".s0000-000100.parquet.tmp-2"
    for path in (old, young):
        path.write_bytes(b"half a shard")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    compact(results)
    assert not old.exists() and young.exists()


def test_a_damaged_shard_leaves_its_segment_uncompacted_with_a_warning(results):
    _run_with_many_shards(results, "done")
    shard = sorted((results / "runs" / "done" / "metrics").glob("*.parquet"))[1]
    offset = pq.read_metadata(shard).row_group(0).column(4).data_page_offset  # the `value` column's first page
    data = bytearray(shard.read_bytes())
    data[offset : offset + 8] = b"\xff" * 8
    shard.write_bytes(bytes(data))
    files = _files(results, "done")
    with pytest.warns(db.CorruptShardWarning, match=f"{shard} is damaged"):
        compact(results)
    assert _files(results, "done") == files


def test_a_truncated_shard_leaves_its_segment_uncompacted_and_is_kept(results):
    _run_with_many_shards(results, "done")
    shard = sorted((results / "runs" / "done" / "metrics").glob("*.parquet"))[1]
    shard.write_bytes(shard.read_bytes()[:100])
    files = _files(results, "done")
    with pytest.warns(db.CorruptShardWarning, match=f"not compacting .*: {shard} is unreadable"):
        compact(results)
    assert _files(results, "done") == files and shard.exists()
    assert len(_files(results, "done", "layer_metrics")) > 1  # its segment's other tables wait with it


HOLD_THE_LOCK = """
import signal, sys
from db.compact import compaction_lock
with compaction_lock(sys.argv[1]):
    print("held", flush=True)
    signal.pause()  # until the test kills it
"""


@pytest.mark.slow
def test_a_compaction_waits_for_the_one_running_and_not_for_a_killed_one(results):
    """One compaction at a time: a second waits (told who holds the lock) and merges nothing meanwhile; the lock
    dies with its holder, so a compaction killed midway blocks nobody."""
    _run_with_many_shards(results, "done")
    files = _files(results, "done")
    holder = subprocess.Popen([sys.executable, "-c", HOLD_THE_LOCK, str(results)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        told, merged = [], []
        second = threading.Thread(target=lambda: merged.append(compact(results, on_wait=told.append)))
        second.start()
        while not told:
            time.sleep(0.01)
        assert told == [f"pid {holder.pid} on {socket.gethostname()}"]
        assert second.is_alive() and _files(results, "done") == files
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    second.join()
    assert merged == [1] and len(_files(results, "done")) == 1
