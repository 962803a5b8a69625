import io
import json

import duckdb
import pyarrow as pa
import pytest

from db.render import FORMATS, json_records, text_table, to_arrow, write


def test_text_table_aligns_columns_and_shows_null_as_null():
    table = pa.table({"run": ["a", "longer", None], "loss": [1.23456789, None, 2.0], "note": ["-", None, "x"]})
    assert text_table(table).splitlines() == [
        "run        loss  note",
        "------  -------  ----",
        "a       1.23457  -",
        "longer     NULL  NULL",
        "NULL          2  x",
        "(3 rows)",
    ]


def test_json_records_turn_nan_into_null():
    records = json.loads(json_records(pa.table({"x": [float("nan"), 1.0]})))
    assert records == [{"x": None}, {"x": 1.0}]


def test_text_table_keeps_columns_that_share_a_name():
    assert text_table(pa.table([[1], [2]], names=["n", "n"])).splitlines()[2].split() == ["1", "2"]


NESTED = ("SELECT [1, 2] AS l, {'a': 1} AS st, INTERVAL 1 DAY AS iv, union_value(k := 3) AS u, sum(x) AS total, 1.5 AS "
          "d FROM range(3) t(x)")


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_writes_nested_interval_union_and_decimal_columns(fmt):
    sink = io.BytesIO()
    write(to_arrow(duckdb.sql(NESTED), fmt), fmt, sink)
    assert sink.getvalue()


def test_csv_gets_duckdbs_text_for_nested_values():
    sink = io.BytesIO()
    write(to_arrow(duckdb.sql(NESTED), "csv"), "csv", sink)
    assert sink.getvalue().decode().splitlines()[1] == '"[1, 2]","{\'a\': 1}","1 day","3",3,1.5'


def test_json_gets_numbers_for_decimals_and_sums_and_text_for_intervals():
    records = json.loads(json_records(to_arrow(duckdb.sql(NESTED), "json")))
    assert records == [{"l": [1, 2], "st": {"a": 1}, "iv": "1 day", "u": 3, "total": 3, "d": 1.5}]


def test_parquet_keeps_nested_columns_nested():
    table = to_arrow(duckdb.sql(NESTED), "parquet")
    assert table.column("l").to_pylist() == [[1, 2]] and table.column("iv").to_pylist() == ["1 day"]
