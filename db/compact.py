"""`compact`: merge each finished run segment's small data shards into one shard per table.

Fewer files make every scan cheaper (a long run flushes hundreds of shards). Rows are never lost: the
merged shard is published (temp file + rename) before any original is deleted, and while both exist the
catalog reads only the merged one; an interrupted compact is finished by the next. Only segments with a
status shard (closed writers) are touched, and only segments whose every shard validates and reads back
whole (an unreadable or damaged one leaves its segment as it was, with a warning). Connections opened
before a compact must reconnect, since the files they listed are gone. It also deletes temp files that killed writers
left more than an hour ago, and last writes the catalog index (`db/index.py`) so that connecting to a large store reads
a few files instead of thousands. One compaction runs at a time (`compaction_lock`): a second one waits, then
finds little left to do.
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
import warnings
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from db.connect import load_catalog
from db.errors import CorruptShardWarning, DbError
from db.index import write_index
from db.paths import compacted_shard_name, parse_segment, shard_span, superseded_by_compaction
from db.schema import DATA_SCHEMAS
from db.shard_io import publish

LOCK_FILE = "compact.lock"

def _finished_segments(status_files: list[str]) -> set[tuple[str, int]]:
    return {(Path(f).parent.parent.name, parse_segment(Path(f).name)) for f in status_files}


def _remove_leftovers(table_dir: Path) -> None:
    """Delete originals a previous, interrupted compact already merged."""
    names = [n for n in os.listdir(table_dir) if n.endswith(".parquet") and n.startswith("s")]
    for name in superseded_by_compaction(names):
        (table_dir / name).unlink(missing_ok=True)


def _remove_stale_temp_files(run_dir: Path, older_than_s: float) -> None:
    """Delete hidden temp files of writers killed mid-write; young ones may belong to a live writer."""
    cutoff = time.time() - older_than_s
    for path in run_dir.glob("*/.*.tmp-*"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except FileNotFoundError:  # its writer just renamed it into place
            pass


def _read_whole(files: list[Path]) -> pa.Table | None:
    """The shards concatenated, or None (with a warning) when one of them does not read back whole."""
    tables = []
    for file in files:
        try:
            tables.append(pq.ParquetFile(file, page_checksum_verification=True).read())
        except Exception as err:  # a damaged shard: keep the segment as it is
            warnings.warn(f"not compacting {file.parent}: {file} is damaged ({err})", CorruptShardWarning, stacklevel=3)
            return None
    return pa.concat_tables(tables)


def compact(results_dir: str | os.PathLike, stale_temp_after_s: float = 3600.0,
            on_wait: Callable[[str], None] | None = None) -> int:
    """Compact every finished segment with more than one shard in some table, then rewrite the index, holding
    the store's compaction lock (another compaction running: `on_wait(who)` is called, then this one waits).

    Returns how many run segments had shards merged.
    """
    if not Path(results_dir).is_dir():
        load_catalog(results_dir)  # NoResultsError, naming the directory, before a lock file is made anywhere
    with compaction_lock(results_dir, on_wait):
        return _compact(results_dir, stale_temp_after_s)


@contextmanager
def compaction_lock(results_dir: str | os.PathLike, on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold `<results>/compact.lock` (an exclusive `flock`): one compaction of a store at a time, whoever runs
    it (sweeps closing, `harness db compact`). The kernel drops the lock with its holder's process, so a
    compaction killed midway blocks nobody, and the next one finishes its work. `on_wait(who)`: called once,
    with the holder's host and pid, when this call has to wait."""
    path = Path(results_dir) / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            busy = False
        except BlockingIOError:
            busy = True
        except OSError as err:  # a filesystem without locks
            raise DbError(f"cannot lock {path} to compact the store: {err.strerror or err}") from None
        if busy:
            if on_wait is not None:
                on_wait(os.pread(fd, 256, 0).decode(errors="replace").strip() or "another process")
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def _compact(results_dir: str | os.PathLike, stale_temp_after_s: float) -> int:
    """`compact`'s work, under the lock."""
    catalog = load_catalog(results_dir)
    finished = _finished_segments(catalog.files["status"])
    # A shard the catalog skipped may be readable later (a flaky network filesystem): merging around it would delete it.
    unreadable = {(Path(f).parent.parent.name, parse_segment(Path(f).name)): f for f in catalog.skipped}
    changed: set[tuple[str, int]] = set()
    for table in DATA_SCHEMAS:
        groups: dict[tuple[str, int], list[Path]] = defaultdict(list)
        for file in map(Path, catalog.files[table]):
            segment, _, _, compacted = shard_span(file.name)
            run_id = file.parent.parent.name
            if not compacted and (run_id, segment) in finished:
                groups[(run_id, segment)].append(file)
        for (run_id, segment), files in groups.items():
            if len(files) < 2:
                continue
            if (run_id, segment) in unreadable:
                message = f"not compacting {files[0].parent}: {unreadable[run_id, segment]} is unreadable"
                warnings.warn(message, CorruptShardWarning, stacklevel=2)
                continue
            merged = _read_whole(files)
            if merged is None:
                continue
            first, last = shard_span(files[0].name)[1], shard_span(files[-1].name)[2]
            publish(files[0].parent / compacted_shard_name(segment, first, last), merged.replace_schema_metadata(None),
                    table)
            for f in files:
                f.unlink()
            changed.add((run_id, segment))
        for table_dir in {Path(f).parent for f in catalog.files[table]}:
            _remove_leftovers(table_dir)
    for run_dir in {Path(f).parent.parent for f in catalog.files["manifest"]}:
        _remove_stale_temp_files(run_dir, stale_temp_after_s)
    write_index(duckdb.connect(), load_catalog(results_dir))
    return len(changed)
