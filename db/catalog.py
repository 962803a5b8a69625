"""Finding and validating the shards of a results directory before DuckDB reads them.

Every published shard is immutable, so a shard validated once (`db/validate.py`: footer readable, our schema
version, expected columns; a manifest or status shard read whole) stays valid while its (size, mtime) is unchanged:
an in-process cache, seeded from the catalog index when there is one (`db/index.py`), makes a reconnect cost one
`stat` per file. A shard that fails validation is left out with a warning naming it, and kept in `problems`, so
one bad file never breaks a query and the views can say which runs it damaged (db/damage_views.py).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from db.errors import CorruptShardWarning
from db.index import Index, load_index
from db.paths import RUNS_DIR, is_shard_name, superseded_by_compaction
from db.schema import DATA_SCHEMAS, TABLES
from db.validate import read_whole, shard_problem

_validated: dict[str, tuple[int, int]] = {}
_damaged: dict[str, tuple[tuple[int, int], str]] = {}  # footer fine, pages not (find_damaged): key and problem


@dataclass
class Catalog:
    """The readable shards of one results directory, per table, as of one scan."""

    results_dir: Path
    files: dict[str, list[str]] = field(default_factory=lambda: {table: [] for table in TABLES})
    stats: dict[str, tuple[int, int]] = field(default_factory=dict)  # path → (size, mtime_ns) of each file listed
    skipped: list[str] = field(default_factory=list)  # shards left out as unreadable (each with a warning)
    problems: dict[str, str] = field(default_factory=dict)  # each skipped shard → what is wrong with it
    index: Index | None = None

    @property
    def n_runs(self) -> int:
        return len(self.files["manifest"])


def _remembered_problem(path: str, key: tuple[int, int], table: str) -> str | None:
    """`shard_problem`, or what is remembered about the shard at this (size, mtime_ns)."""
    if path in _damaged and _damaged[path][0] == key:
        return _damaged[path][1]
    if _validated.get(path) != key:
        problem = shard_problem(path, key[0], table)
        if problem:
            return problem
        _validated[path] = key
    return None


def run_shards(run_path: str):
    """(table, path, (size, mtime_ns)) of every published shard of one run, leftovers of a compaction excluded."""
    for table in TABLES:
        table_dir = os.path.join(run_path, table)
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
            yield table, entry.path, (stat.st_size, stat.st_mtime_ns)


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
        for table, path, key in run_shards(run.path):
            problem = _remembered_problem(path, key, table)
            if problem:
                warnings.warn(f"skipping shard {path}: {problem}", CorruptShardWarning, stacklevel=2)
                catalog.skipped.append(path)
                catalog.problems[path] = problem
                continue
            catalog.files[table].append(path)
            catalog.stats[path] = key
    return catalog


def run_problems(results_dir: str | os.PathLike, run_id: str) -> dict[str, str]:
    """Each damaged shard of one run → what is wrong with it (cached like `scan`'s checks: a `stat` per shard)."""
    found = {}
    for table, path, key in run_shards(os.path.join(os.path.abspath(results_dir), RUNS_DIR, run_id)):
        problem = _remembered_problem(path, key, table)
        if problem:
            found[path] = problem
    return found


def find_damaged(catalog: Catalog) -> list[str]:
    """Read every listed shard in full, verifying page checksums; remember and return the damaged ones.

    Validation reads only footers (cheap); damage inside a data page shows up only when DuckDB decodes
    it, with a message that names no file. This finds the file, so later scans leave it out.
    """
    found = []
    for path, key in catalog.stats.items():
        _, problem = read_whole(path)
        if problem:
            _damaged[path] = (key, problem)
            _validated.pop(path, None)
            found.append(path)
    return found
