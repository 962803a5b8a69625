"""Publishing shards atomically: write a hidden temp file, fsync, then give it its final name.

A reader therefore sees a shard whole or not at all; a writer killed mid-write leaves only a temp file,
which no reader looks at.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from db.errors import DbError
from db.schema import shard_metadata


def _write_temp(path: Path, table: pa.Table, table_name: str) -> Path:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **shard_metadata(table_name)})
    with open(tmp, "wb") as sink:
        # lets a deep check catch damaged pages
        pq.write_table(table, sink, compression="zstd", write_page_checksum=True)
        sink.flush()
        os.fsync(sink.fileno())
    return tmp


def publish(path: Path, table: pa.Table, table_name: str) -> None:
    """Write `table` to `path` atomically (rename), replacing nothing: each writer owns its names."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.replace(_write_temp(path, table, table_name), path)


def publish_exclusive(path: Path, table: pa.Table, table_name: str) -> None:
    """Like `publish`, but fail if `path` exists: claiming a run segment must never overwrite another writer's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temp(path, table, table_name)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise DbError(f"{path} already exists: another writer holds this run segment.") from None
    finally:
        tmp.unlink()
