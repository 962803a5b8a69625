import duckdb
import pytest

import db
from db.readonly import check_read_only, read_only_relation


@pytest.mark.parametrize(
    "sql",
    [
        "DROP VIEW runs",
        "DELETE FROM metrics",
        "INSERT INTO _status VALUES (1)",
        "UPDATE _manifests SET sweep = 'x'",
        "CREATE TABLE t AS SELECT 1",
        "COPY (SELECT 1) TO 'out.csv'",
        "ATTACH 'other.db'",
        "PRAGMA version",
        "SET threads = 1",
        "INSTALL httpfs",
        "EXPORT DATABASE 'dump'",
        "SELECT 1; DROP VIEW runs",
        "EXPLAIN ANALYZE COPY (SELECT 1) TO 'results/out.csv'",
        "explain analyze drop view runs",
        "/* why */ EXPLAIN ANALYZE DELETE FROM metrics",
    ],
)
def test_anything_but_one_select_is_refused(sql):
    with pytest.raises(db.ReadOnlyQueryError, match="not allowed|exactly one|EXPLAIN is allowed only"):
        check_read_only(duckdb.connect(), sql)


@pytest.mark.parametrize("sql",
                         ["SELECT 1", "WITH a AS (SELECT 1) SELECT * FROM a", "FROM range(3)", "EXPLAIN SELECT 1",
                          "explain analyze select 1", "DESCRIBE SELECT 1"])
def test_reads_pass(sql):
    check_read_only(duckdb.connect(), sql)


def test_checked_queries_cannot_read_outside_the_results_dir(results, write_run, tmp_path):
    write_run(results, "r1")
    outside = tmp_path / "secret.csv"
    outside.write_text("a\n1\n")
    con = db.connect(results)
    assert read_only_relation(con, "SELECT count(*) FROM metrics", results).fetchall() == [(33,)]
    with pytest.raises(duckdb.Error, match="disabled by configuration"):
        con.sql(f"SELECT * FROM read_csv('{outside}')").fetchall()
    with pytest.raises(duckdb.Error, match="locked"):
        con.execute("SET enable_external_access = true")
