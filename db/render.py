"""Writing query results for people and programs: an aligned text table, CSV, JSON or Parquet."""

from __future__ import annotations

import json
import math
from typing import BinaryIO

import pyarrow as pa

FORMATS = ("table", "csv", "json", "parquet")


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def text_table(table: pa.Table) -> str:
    """Columns aligned under their names; numbers right-aligned, NULL shown as '-'."""
    header = table.column_names
    rows = [[_cell(v) for v in row.values()] for row in table.to_pylist()]
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
    return value


def json_records(table: pa.Table) -> str:
    """A JSON array of one object per row; NaN/inf become null, timestamps ISO text."""
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
