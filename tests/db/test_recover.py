import warnings

import duckdb
import pyarrow.parquet as pq
import pytest

import db
from db.readonly import read_only_relation
from db.recover import run_recovering

COUNT = "SELECT run_id, count(value) FROM metrics GROUP BY run_id ORDER BY run_id"


def _damage_pages(path):
    """Overwrite the header of the `value` column's first data page: the footer stays readable."""
    offset = pq.read_metadata(path).row_group(0).column(4).data_page_offset
    data = bytearray(path.read_bytes())
    data[offset : offset + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))


@pytest.fixture
def damaged(results, write_run):
    write_run(results, "good")
    write_run(results, "hurt")
    shard = next((results / "runs" / "hurt" / "metrics").glob("*.parquet"))
    _damage_pages(shard)
    return shard


def test_damage_inside_data_pages_breaks_a_plain_query(results, damaged):
    with pytest.raises(duckdb.Error):
        db.connect(results).execute(COUNT).fetchall()


def test_run_recovering_leaves_the_damaged_shard_out_with_a_warning(results, damaged):
    with pytest.warns(db.CorruptShardWarning, match=f"{damaged}: damaged data pages"):
        rows = run_recovering(results, lambda con: con.execute(COUNT).fetchall())
    assert rows == [("good", 33)]


@pytest.mark.parametrize(
    "sql, error",
    [
        ("SELECT nope FROM metrics", duckdb.BinderException),
        ("SELECT 'x'::INTEGER FROM metrics", duckdb.ConversionException),
        ("SELECT * FROM read_text('/etc/hostname')", duckdb.PermissionException),
    ],
)
def test_errors_in_the_sql_itself_are_raised_without_reading_every_shard(results, damaged, sql, error):
    with warnings.catch_warnings():
        warnings.simplefilter("error", db.CorruptShardWarning)  # a full read would find and report `damaged`
        with pytest.raises(error):
            run_recovering(results, lambda con: read_only_relation(con, sql, results).fetchall())
