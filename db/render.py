"""Writing query results for people and programs: an aligned text table, CSV, JSON or Parquet."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import BinaryIO

import pyarrow as pa

from db.sql import quote_ident

FORMATS = ("table", "csv", "json", "parquet")

# DuckDB types (`DuckDBPyType.id`) each format cannot hold, or shows badly, given as DuckDB's text instead
# ('[1, 2]', '1 day'): Arrow's CSV writer has no nested types, its Parquet writer no intervals or unions.
_UNREADABLE = {"interval", "bit", "bignum"}
AS_TEXT = {
    "table": _UNREADABLE | {"blob"},
    "csv": _UNREADABLE | {"blob", "list", "array", "struct", "map", "union"},
    "json": _UNREADABLE | {"blob"},
    "parquet": _UNREADABLE | {"union"},
}


def to_arrow(relation, fmt: str) -> pa.Table:
    """The rows of DuckDB `relation` as Arrow, each column that format `fmt` cannot hold cast to text."""
    text = AS_TEXT[fmt]
    if not any(kind.id in text for kind in relation.types):
        return relation.to_arrow_table()
    columns = [  # by position: a query may give two columns the same name
        f"CAST(#{i} AS VARCHAR) AS {quote_ident(name)}" if kind.id in text else f"#{i} AS {quote_ident(name)}"
        for i, (name, kind) in enumerate(zip(relation.columns, relation.types), start=1)
    ]
    return relation.project(", ".join(columns)).to_arrow_table()


def _cell(value: object) -> str:
    if value is None:
        return "NULL"  # as DuckDB prints it: a '-' could be a value, or read as a missing column
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def text_table(table: pa.Table) -> str:
    """Columns aligned under their names; numbers right-aligned, NULL shown as NULL."""
    header = table.column_names
    # by position: names may repeat
    rows = [list(map(_cell, row)) for row in zip(*(column.to_pylist() for column in table.columns))]
    widths = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(header)]
    numeric = [pa.types.is_integer(t) or pa.types.is_floating(t) for t in table.schema.types]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric)).rstrip()

    lines = [line(header), line(["-" * w for w in widths]), *(line(row) for row in rows)]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines) + "\n"


def _json_safe(value: object) -> object:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN/inf
    if isinstance(value, Decimal):  # DuckDB's DECIMAL and HUGEINT (`sum` of integers) arrive as Decimal
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def json_records(table: pa.Table) -> str:
    """A JSON array of one object per row; NaN/inf become null, decimals numbers, timestamps ISO text."""
    records = [{k: _json_safe(v) for k, v in row.items()} for row in table.to_pylist()]
    return json.dumps(records, default=lambda v: v.isoformat() if hasattr(v, "isoformat") else str(v)) + "\n"


def write(table: pa.Table, fmt: str, sink: BinaryIO) -> None:
    """Write `table` to the binary stream `sink` in format `fmt` (one of FORMATS)."""
    if fmt == "table":
        sink.write(text_table(table).encode())
    elif fmt == "json":
        sink.write(json_records(table).encode())
    elif fmt == "csv":
        import pyarrow.csv

        pyarrow.csv.write_csv(table, sink)
    elif fmt == "parquet":
        import pyarrow.parquet

        pyarrow.parquet.write_table(table, sink)
    else:
        raise ValueError(f"format={fmt!r} is invalid; valid options: {', '.join(map(repr, FORMATS))}.")
