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

from db.errors import CorruptShardWarning, SchemaVersionError
from db.schema import MANIFEST_SCHEMA, STATUS_SCHEMA
from db.shard_io import publish
from db.validate import index_rows, one_line

INDEX_DIR = "index"
ROW_TABLES = {"manifest": MANIFEST_SCHEMA, "status": STATUS_SCHEMA}
SOURCE_COLUMNS = ["_source", "_size", "_mtime_ns"]  # the shard a row came from, and its (size, mtime) then


@dataclass
class Index:
    """Index rows per row table (with source columns) and the validated shards: abs path → (size, mtime_ns)."""

    rows: dict[str, pa.Table]
    validated: dict[str, tuple[int, int]]


def _read(path: Path) -> pa.Table:
    """One index file, checked (db/validate.py): a damaged one raises, so the whole index is ignored."""
    rows, problem = index_rows(path)  # a newer schema version raises SchemaVersionError
    if problem:
        raise ValueError(f"{path}: {problem}")
    return rows


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
        warnings.warn(f"ignoring index {root}: {one_line(err)}", CorruptShardWarning, stacklevel=3)
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


def _stats_table(con, catalog) -> None:
    """`_shard_stats` (path, _source, _size, _mtime_ns): every file of `catalog`, made in DuckDB from list
    parameters because building Arrow arrays from Python imports pandas (0.7 s of a sweep's closing compaction)."""
    paths = sorted(catalog.stats)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _shard_stats AS SELECT unnest(?::VARCHAR[]) AS path, unnest(?::VARCHAR[]) AS "
        "_source, unnest(?::BIGINT[]) AS _size, unnest(?::BIGINT[]) AS _mtime_ns",
        [paths, [os.path.relpath(p, catalog.results_dir) for p in paths],
         [catalog.stats[p][0] for p in paths], [catalog.stats[p][1] for p in paths]],
    )


def write_index(con, catalog) -> None:
    """Write the index of `catalog` (a fresh scan) using DuckDB connection `con` to read the row shards."""
    from db.sql import quote_literal

    root = catalog.results_dir / INDEX_DIR
    _stats_table(con, catalog)
    for table, schema in ROW_TABLES.items():
        if catalog.files[table]:
            listing = ", ".join(map(quote_literal, catalog.files[table]))
            rows = con.sql(
                f"SELECT r.* EXCLUDE (filename), s._source, s._size, s._mtime_ns FROM read_parquet([{listing}], "
                "union_by_name = true, filename = true) r JOIN _shard_stats s ON r.filename = s.path ORDER BY "
                "r.filename"
            ).to_arrow_table()
        else:
            columns = [pa.field("_source", pa.string()), pa.field("_size", pa.int64()),
                       pa.field("_mtime_ns", pa.int64())]
            rows = pa.Table.from_batches([], schema=pa.schema([*schema, *columns]))  # not empty_table(): pandas
        publish(root / f"{table}.parquet", rows, "index")
    publish(root / "shards.parquet",
            con.sql("SELECT _source, _size, _mtime_ns FROM _shard_stats ORDER BY path").to_arrow_table(), "index")
