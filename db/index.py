"""The catalog index: one consolidated copy of every manifest and status row and of the validated-shard list.

Opening a store of a thousand runs would otherwise read two thousand tiny manifest and status files and
check a thousand footers, which costs more than the queries themselves. `harness db compact` writes the
index (atomically, under `<results>/index/`); a reader takes from it every row whose source shard still
has the recorded size and mtime, and reads from disk only the shards that are new or changed since. The
shards stay the source of truth: a missing, stale or damaged index only makes connecting slower.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from db.errors import CorruptShardWarning, SchemaVersionError
from db.schema import MANIFEST_SCHEMA, STATUS_SCHEMA, VERSION_KEY, check_version
from db.shard_io import publish

INDEX_DIR = "index"
ROW_TABLES = {"manifest": MANIFEST_SCHEMA, "status": STATUS_SCHEMA}
SOURCE_COLUMNS = ["_source", "_size", "_mtime_ns"]  # the shard a row came from, and its (size, mtime) then


@dataclass
class Index:
    """Index rows per row table (with source columns) and the validated shards: abs path → (size, mtime_ns)."""

    rows: dict[str, pa.Table]
    validated: dict[str, tuple[int, int]]


def _read(path: Path) -> pa.Table:
    table = pq.ParquetFile(path).read()  # not pq.read_table: that imports pyarrow.dataset and pandas (~0.4 s)
    check_version((table.schema.metadata or {}).get(VERSION_KEY, b"?").decode(errors="replace"), str(path))
    return table


def load_index(results_dir: Path) -> Index | None:
    """The index of `results_dir`, or None when it has none (or an unreadable one, with a warning)."""
    root = Path(results_dir) / INDEX_DIR
    if not (root / "shards.parquet").exists():
        return None
    try:
        shards = _read(root / "shards.parquet")
        rows = {table: _read(root / f"{table}.parquet") for table in ROW_TABLES}
    except SchemaVersionError:
        raise
    except Exception as err:  # damaged or half-replaced index: fall back to the shards themselves
        warnings.warn(f"ignoring index {root}: {err}", CorruptShardWarning, stacklevel=3)
        return None
    paths = [os.path.join(results_dir, p) for p in shards.column("_source").to_pylist()]
    keys = zip(shards.column("_size").to_pylist(), shards.column("_mtime_ns").to_pylist())
    return Index(rows=rows, validated=dict(zip(paths, keys)))


def current_sources(index: Index, table: str, results_dir: Path, stats: dict[str, tuple[int, int]]) -> list[str]:
    """Index `_source` values (relative paths) of `table` whose shard still has the recorded size and mtime."""
    rows = index.rows[table]
    sources = rows.column("_source").to_pylist()
    keys = zip(rows.column("_size").to_pylist(), rows.column("_mtime_ns").to_pylist())
    return [source for source, key in zip(sources, keys) if stats.get(os.path.join(results_dir, source)) == key]


def _with_sources(table: pa.Table, results_dir: Path, stats: dict[str, tuple[int, int]]) -> pa.Table:
    paths = table.column("filename").to_pylist()
    table = table.drop_columns(["filename"])
    return (
        table.append_column("_source", pa.array([os.path.relpath(p, results_dir) for p in paths], pa.string()))
        .append_column("_size", pa.array([stats[p][0] for p in paths], pa.int64()))
        .append_column("_mtime_ns", pa.array([stats[p][1] for p in paths], pa.int64()))
    )


def write_index(con, catalog) -> None:
    """Write the index of `catalog` (a fresh scan) using DuckDB connection `con` to read the row shards."""
    from db.sql import quote_literal

    root = catalog.results_dir / INDEX_DIR
    for table, schema in ROW_TABLES.items():
        if catalog.files[table]:
            listing = ", ".join(map(quote_literal, catalog.files[table]))
            rows = con.sql(f"SELECT * FROM read_parquet([{listing}], union_by_name = true, filename = true)").to_arrow_table()
        else:
            rows = schema.empty_table().append_column("filename", pa.array([], pa.string()))
        publish(root / f"{table}.parquet", _with_sources(rows, catalog.results_dir, catalog.stats), "index")
    paths = sorted(catalog.stats)
    shards = pa.table({
        "_source": pa.array([os.path.relpath(p, catalog.results_dir) for p in paths], pa.string()),
        "_size": pa.array([catalog.stats[p][0] for p in paths], pa.int64()),
        "_mtime_ns": pa.array([catalog.stats[p][1] for p in paths], pa.int64()),
    })
    publish(root / "shards.parquet", shards, "index")
