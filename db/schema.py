"""The on-disk schema: one Arrow schema per shard table, and the schema version stored with the data.

The version lives in two places: `<results>/SCHEMA_VERSION` (checked before anything is read or written)
and each shard's Parquet key-value metadata (checked when the shard is validated), so a shard copied in
from a newer store is caught too. Bump `SCHEMA_VERSION` on any change that old readers would misread.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa

from db.errors import SchemaVersionError

SCHEMA_VERSION = 1
VERSION_FILE = "SCHEMA_VERSION"
VERSION_KEY = b"harness.db.schema_version"
TABLE_KEY = b"harness.db.table"

_RUN = [pa.field("run_id", pa.string(), nullable=False), pa.field("segment", pa.int32(), nullable=False)]

DATA_SCHEMAS: dict[str, pa.Schema] = {
    "metrics": pa.schema([*_RUN, ("step", pa.int64()), ("name", pa.string()), ("value", pa.float64())]),
    "layer_metrics": pa.schema(
        [*_RUN, ("step", pa.int64()), ("layer", pa.int32()), ("head", pa.int32()), ("name", pa.string()),
         ("value", pa.float64())]
    ),
    "events": pa.schema(
        [*_RUN, ("step", pa.int64()), ("kind", pa.string()), ("value", pa.float64()), ("detail", pa.string()),
         ("logged_at", pa.timestamp("us", tz="UTC"))]
    ),
}

# Manifest shards also carry one `config.<key>` column per flattened config entry (types vary by run).
MANIFEST_SCHEMA = pa.schema([
    *_RUN,
    ("start_step", pa.int64()),
    ("sweep", pa.string()),
    ("arm", pa.string()),
    ("seed", pa.int64()),
    ("params", pa.int64()),
    ("flops_per_token", pa.float64()),
    ("started_at", pa.timestamp("us", tz="UTC")),
    ("host", pa.string()),
    ("pid", pa.int64()),
    ("config", pa.string()),
    ("claim", pa.int64()),  # the claim generation the segment was written under (NULL outside sweeps)
    # Which code and machine wrote the segment (db/provenance.py; NULL in shards written before it was recorded).
    ("harness_version", pa.string()),
    ("git_commit", pa.string()),  # of the checkout `harness` was imported from; NULL when it is none
    ("git_dirty", pa.bool_()),
    ("torch_version", pa.string()),
    ("lightning_version", pa.string()),
    ("python_version", pa.string()),
    ("device_name", pa.string()),  # 'cpu' or the CUDA device's name, '× N' for a run on N devices
    ("trainer_precision", pa.string()),  # Lightning's precision: '32-true', 'bf16-mixed'
])
CONFIG_PREFIX = "config."

STATUS_SCHEMA = pa.schema(
    [*_RUN, ("status", pa.string()), ("finished_at", pa.timestamp("us", tz="UTC")),
     ("diverged_at_step", pa.int64()), ("summary", pa.string())]
)

TABLES = ("manifest", "status", *DATA_SCHEMAS)


def shard_metadata(table: str) -> dict[bytes, bytes]:
    """Key-value metadata stamped on every shard of `table`."""
    return {VERSION_KEY: str(SCHEMA_VERSION).encode(), TABLE_KEY: table.encode()}


def check_version(found: object, where: str) -> None:
    """Raise SchemaVersionError unless `found` names a version this code can read."""
    try:
        version = int(found)  # type: ignore[call-overload]  # any value: what int() refuses names no version
    except (TypeError, ValueError):
        version = None
    if version is None or version < 1:
        raise SchemaVersionError(f"{where} has an unknown schema version {found!r}; this harness reads versions "
                                 f"1..{SCHEMA_VERSION}.")
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{where} was written with schema version {version}, newer than this harness reads "
            f"(1..{SCHEMA_VERSION}); upgrade harness to read it."
        )


def read_version_file(results_dir: Path) -> int | None:
    """The checked schema version of a results directory, or None when it has none yet."""
    path = Path(results_dir) / VERSION_FILE
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return None
    check_version(text, str(path))
    return int(text)


def ensure_version_file(results_dir: Path) -> None:
    """Stamp a new results directory with our schema version; check an existing one."""
    if read_version_file(results_dir) is not None:
        return
    path = Path(results_dir) / VERSION_FILE
    tmp = path.with_name(f".{VERSION_FILE}.tmp-{os.getpid()}")
    tmp.write_text(f"{SCHEMA_VERSION}\n")
    try:
        os.link(tmp, path)  # fails if another writer stamped it first; then theirs is checked below
    except FileExistsError:
        read_version_file(results_dir)
    finally:
        tmp.unlink()
