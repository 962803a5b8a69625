"""Finding and validating the shards of a results directory before DuckDB reads them.

Every published shard is immutable, so a shard validated once (footer readable, our schema version,
expected columns) stays valid while its (size, mtime) is unchanged: an in-process cache, seeded from the
catalog index when there is one (`db/index.py`), makes a reconnect cost one `stat` per file. A shard
that fails validation is left out with a warning naming it, so one bad file never breaks a query.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from db.errors import CorruptShardWarning
from db.index import Index, load_index
from db.paths import RUNS_DIR, is_shard_name, superseded_by_compaction
from db.schema import DATA_SCHEMAS, STATUS_SCHEMA, TABLE_KEY, TABLES, VERSION_KEY, check_version

MAGIC = b"PAR1"
REQUIRED_COLUMNS = {
    **{table: schema.names for table, schema in DATA_SCHEMAS.items()},
    "status": STATUS_SCHEMA.names,
    "manifest": ["run_id", "segment", "start_step"],
}

_validated: dict[str, tuple[int, int]] = {}
_damaged: dict[str, tuple[int, int]] = {}  # shards whose footer is fine but whose pages are not (see find_damaged)


@dataclass
class Catalog:
    """The readable shards of one results directory, per table, as of one scan."""

    results_dir: Path
    files: dict[str, list[str]] = field(default_factory=lambda: {table: [] for table in TABLES})
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # path → (size, mtime_ns) of each file listed
    skipped: list[str] = field(default_factory=list)  # shards left out as unreadable (each with a warning)
    index: Index | None = None

    @property
    def n_runs(self) -> int:
        return len(self.files["manifest"])


def _problem(path: str, size: int, table: str) -> str | None:
    """Why the shard at `path` is unreadable, or None when it is fine. Newer schema versions raise."""
    if size < 12:
        return f"only {size} bytes, too short for a Parquet file"
    with open(path, "rb") as handle:
        head = handle.read(4)
        handle.seek(-4, os.SEEK_END)
        tail = handle.read(4)
    if head != MAGIC or tail != MAGIC:
        return "no Parquet magic bytes at start or end (truncated or overwritten)"
    try:
        meta = pq.read_metadata(path)
    except Exception as err:  # pyarrow raises several types for a damaged footer
        return f"unreadable Parquet footer ({err})"
    kv = meta.metadata or {}
    if VERSION_KEY not in kv or kv.get(TABLE_KEY) != table.encode():
        return f"not a harness {table} shard (no schema version metadata)"
    check_version(kv[VERSION_KEY].decode(errors="replace"), path)
    missing = [c for c in REQUIRED_COLUMNS[table] if c not in meta.schema.names]
    if missing:
        return f"missing columns {missing}"
    return None


def _remembered_problem(path: str, key: tuple[int, int], table: str) -> str | None:
    """`_problem`, or what is remembered about the shard at this (size, mtime_ns)."""
    if _damaged.get(path) == key:
        return "damaged data pages"
    if _validated.get(path) != key:
        problem = _problem(path, key[0], table)
        if problem:
            return problem
        _validated[path] = key
    return None


def scan(results_dir: Path) -> Catalog:
    """List and validate every published shard under `results_dir`, warning about each bad one."""
    catalog = Catalog(Path(os.path.abspath(results_dir)))
    runs_root = catalog.results_dir / RUNS_DIR
    if not runs_root.is_dir():
        return catalog
    catalog.index = load_index(catalog.results_dir)
    if catalog.index:
        _validated.update(catalog.index.validated)
    for run in sorted(os.scandir(runs_root), key=lambda e: e.name):
        if not run.is_dir():
            continue
        for table in TABLES:
            table_dir = os.path.join(run.path, table)
            try:
                entries = sorted((e for e in os.scandir(table_dir) if is_shard_name(e.name)), key=lambda e: e.name)
            except FileNotFoundError:
                continue
            if table in DATA_SCHEMAS:
                redundant = superseded_by_compaction([e.name for e in entries])
                entries = [e for e in entries if e.name not in redundant]
            for entry in entries:
                try:
                    stat = entry.stat()
                except FileNotFoundError:  # compacted away since the listing
                    continue
                key = (stat.st_size, stat.st_mtime_ns)
                problem = _remembered_problem(entry.path, key, table)
                if problem:
                    warnings.warn(f"skipping shard {entry.path}: {problem}", CorruptShardWarning, stacklevel=2)
                    catalog.skipped.append(entry.path)
                    continue
                catalog.files[table].append(entry.path)
                catalog.stats[entry.path] = key
    return catalog


def find_damaged(catalog: Catalog) -> list[str]:
    """Read every listed shard in full, verifying page checksums; remember and return the damaged ones.

    Validation reads only footers (cheap); damage inside a data page shows up only when DuckDB decodes
    it, with a message that names no file. This finds the file, so later scans leave it out.
    """
    found = []
    for path, key in catalog.stats.items():
        try:
            pq.ParquetFile(path, page_checksum_verification=True).read()
        except Exception:  # any decoding failure means the shard cannot be trusted
            _damaged[path] = key
            _validated.pop(path, None)
            found.append(path)
    return found
