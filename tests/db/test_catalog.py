import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import db


def _shards(results, run_id, table="metrics"):
    return sorted((results / "runs" / run_id / table).glob("*.parquet"))


def _two_runs_with_three_shards_each(results):
    for run_id in ("good", "hurt"):
        writer = db.RunWriter.open(results, run_id, flush_rows=10)
        for step in range(30):
            writer.log_metrics(step, {"loss": float(step)})
        writer.close()


def test_truncated_shard_is_skipped_with_a_warning_naming_it(results):
    _two_runs_with_three_shards_each(results)
    victim = _shards(results, "hurt")[1]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    with pytest.warns(db.CorruptShardWarning, match=str(victim)):
        con = db.connect(results)
    rows = dict(con.execute("SELECT run_id, count(*) FROM metrics GROUP BY run_id").fetchall())
    assert rows == {"good": 30, "hurt": 20}
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (2,)


def test_garbage_and_empty_shards_are_skipped_and_every_view_works(results):
    _two_runs_with_three_shards_each(results)
    garbage, empty = _shards(results, "hurt")[0], _shards(results, "hurt")[2]
    garbage.write_bytes(os.urandom(garbage.stat().st_size))
    empty.write_bytes(b"")
    with pytest.warns(db.CorruptShardWarning) as caught:
        con = db.connect(results)
    assert {str(garbage), str(empty)} <= {str(w.message).split(": ")[0].removeprefix("skipping shard ") for w in caught}
    for view in ("runs", "metrics", "layer_metrics", "events"):
        con.sql(f"SELECT * FROM {view}").fetchall()
    assert con.execute("SELECT count(*) FROM metrics WHERE run_id = 'hurt'").fetchone() == (10,)


def test_parquet_file_without_our_metadata_is_skipped(results):
    _two_runs_with_three_shards_each(results)
    stranger = results / "runs" / "good" / "metrics" / "s0000-999999.parquet"
    pq.write_table(pa.table({"x": [1]}), stranger)
    with pytest.warns(db.CorruptShardWarning, match="not a harness metrics shard"):
        con = db.connect(results)
    assert con.execute("SELECT count(*) FROM metrics").fetchone() == (60,)


def test_temp_files_of_unfinished_writes_are_never_read(results):
    _two_runs_with_three_shards_each(results)
    (results / "runs" / "good" / "metrics" / ".s0000-000009.parquet.tmp-123").write_bytes(b"PAR1 half written")
    assert db.connect(results).execute("SELECT count(*) FROM metrics").fetchone() == (60,)
