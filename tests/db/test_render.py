import json

import pyarrow as pa

from db.render import json_records, text_table


def test_text_table_aligns_columns_and_shows_null_as_dash():
    table = pa.table({"run": ["a", "longer"], "loss": [1.23456789, None]})
    assert text_table(table).splitlines() == [
        "run        loss",
        "------  -------",
        "a       1.23457",
        "longer        -",
        "(2 rows)",
    ]


def test_json_records_turn_nan_into_null():
    records = json.loads(json_records(pa.table({"x": [float("nan"), 1.0]})))
    assert records == [{"x": None}, {"x": 1.0}]
