"""Is this file what the store wrote? One check per kind of file, each giving what is wrong in one line, or None.

Readers run them before they trust a file (shards in db/catalog.py, sweep plans and descriptions in db/plans.py,
the index in db/index.py) and `harness db check` runs them on every file. A check reads the file whole, with its
page checksums, where that is cheap and decides an answer: a manifest or status shard (one row that says what a run
is and how it ended), a plan, a sweep's description. A data shard's pages are read whole only by a `deep` check
(`harness db check`, and the recovery after DuckDB failed to decode one): connecting reads their footers only.
"""

from __future__ import annotations

import json
import os
import zipfile
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from db.paths import RUN_ID_PATTERN, parse_segment
from db.schema import DATA_SCHEMAS, STATUS_SCHEMA, TABLE_KEY, VERSION_KEY, check_version

MAGIC = b"PAR1"
REQUIRED_COLUMNS = {
    **{table: schema.names for table, schema in DATA_SCHEMAS.items()},
    "status": STATUS_SCHEMA.names,
    "manifest": ["run_id", "segment", "start_step"],
}
ROW_TABLES = ("manifest", "status")  # one row per shard, read whole by every check
PLAN_COLUMNS = ["sweep", "arm", "lr", "seed", "run_id", "cell"]  # every plan has had these (later ones may be absent)
INDEX_COLUMNS = ["_source", "_size", "_mtime_ns"]


def one_line(text: object) -> str:
    """`text` with its line breaks and runs of spaces collapsed (pyarrow's messages end in newlines)."""
    return " ".join(str(text).split())


def _magic_problem(path: str | os.PathLike, size: int) -> str | None:
    if size < 12:
        return f"only {size} bytes, too short for a Parquet file (truncated)"
    with open(path, "rb") as handle:
        head = handle.read(4)
        handle.seek(-4, os.SEEK_END)
        tail = handle.read(4)
    if head != MAGIC or tail != MAGIC:
        return "no Parquet magic bytes at start or end (truncated or overwritten)"
    return None


def open_parquet(path: str | os.PathLike, size: int | None = None) -> tuple[pq.ParquetFile | None, str | None]:
    """(the Parquet file at `path`, its footer read, pages to be checked against their checksums as they are read,
    None), or (None, what keeps it from being read: too short, no magic bytes, an unreadable footer)."""
    problem = _magic_problem(path, os.path.getsize(path) if size is None else size)
    if problem:
        return None, problem
    try:
        return pq.ParquetFile(path, page_checksum_verification=True), None
    except Exception as err:  # pyarrow raises several types for a damaged footer
        return None, f"unreadable Parquet footer ({one_line(err)})"


def read_whole(file: pq.ParquetFile | str | os.PathLike) -> tuple[pa.Table | None, str | None]:
    """(the file's rows, None), or (None, what failed): every page decoded and, where written, checksummed."""
    try:
        if not isinstance(file, pq.ParquetFile):
            file = pq.ParquetFile(file, page_checksum_verification=True)
        return file.read(), None
    except Exception as err:  # any decoding failure means the file cannot be trusted
        return None, f"damaged data pages ({one_line(err)})"


def _stamp_problem(meta: pq.FileMetaData, path: str, table: str) -> str | None:
    """Whether the footer says this is a `table` shard of a version we read (a newer version raises)."""
    kv = meta.metadata or {}
    if VERSION_KEY not in kv or kv.get(TABLE_KEY) != table.encode():
        return f"not a harness {table} shard (no schema version metadata)"
    check_version(kv[VERSION_KEY].decode(errors="replace"), path)
    missing = [c for c in REQUIRED_COLUMNS[table] if c not in meta.schema.names]
    return f"missing columns {missing}" if missing else None


def _row_problem(path: str, rows: pa.Table) -> str | None:
    """A manifest or status shard holds one row, of the run and segment its path names."""
    if rows.num_rows != 1:
        return f"{rows.num_rows} rows where its writer wrote 1"
    run_id, segment = rows.column("run_id")[0].as_py(), rows.column("segment")[0].as_py()
    expected = (Path(path).parent.parent.name, parse_segment(Path(path).name))
    if (run_id, segment) != expected:
        return f"holds run {run_id!r} segment {segment}, not {expected[0]!r} {expected[1]}"
    return None


def shard_problem(path: str, size: int, table: str, deep: bool = False) -> str | None:
    """What is wrong with the `table` shard at `path` (`size` bytes), or None; a newer schema version raises.
    Manifest and status shards are always read whole; data shards only when `deep`."""
    file, problem = open_parquet(path, size)
    if file is None:
        return problem
    problem = _stamp_problem(file.metadata, path, table)
    if problem or not (deep or table in ROW_TABLES):
        return problem
    rows, problem = read_whole(file)
    if problem or table not in ROW_TABLES:
        return problem
    return _row_problem(path, rows)


def _plan_rows_problem(rows: pa.Table, sweep: str) -> str | None:
    missing = [c for c in PLAN_COLUMNS if c not in rows.column_names]
    if missing:
        return f"missing columns {missing}"
    if set(rows.column("sweep").to_pylist()) - {sweep}:
        return f"rows of another sweep than {sweep!r}"
    bad = [r for r in rows.column("run_id").to_pylist() if not isinstance(r, str) or not RUN_ID_PATTERN.match(r)]
    return f"{len(bad)} cells without a valid run id" if bad else None


def plan_problem(path: str | os.PathLike, sweep: str, n_cells: int | None = None) -> str | None:
    """What is wrong with a plan (`cells.parquet` of `n_cells` rows, as its sweep.json says; None: not known) or a
    search's cell file (`n_cells` 1) of `sweep`, or None."""
    file, problem = open_parquet(path)
    rows, problem = (None, problem) if problem else read_whole(file)
    if problem:
        return problem
    assert rows is not None  # no problem: rows
    if n_cells is not None and rows.num_rows != n_cells:
        said = f"its sweep.json says {n_cells}" if Path(path).name == "cells.parquet" else f"its writer wrote {n_cells}"
        return f"{rows.num_rows} cells where {said}"
    return _plan_rows_problem(rows, sweep)


META_TYPES = {"question": str, "baseline": str, "source": str, "axes": list, "created_at": str}
CHECKSUM = "checksum"  # of a sweep description: garbling that leaves valid JSON (another baseline) is caught too


def meta_checksum(record: dict) -> str:
    """SHA-256 of a sweep description's JSON (keys sorted), its own checksum left out."""
    import hashlib

    body = {key: value for key, value in record.items() if key != CHECKSUM}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def meta_problem(path: str | os.PathLike, sweep: str) -> tuple[dict | None, str | None]:
    """(the sweep description at `path`, None), or (None, what is wrong with it)."""
    try:
        record = json.loads(Path(path).read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        return None, "not UTF-8 text (garbled)"
    except json.JSONDecodeError as err:
        return None, f"not valid JSON ({err.msg} at line {err.lineno} column {err.colno}: truncated or garbled)"
    if not isinstance(record, dict):
        return None, "not a JSON object"
    if CHECKSUM in record and record[CHECKSUM] != meta_checksum(record):
        return None, "its contents do not match its checksum (garbled or edited)"
    if record.get("sweep") != sweep:
        return None, f"describes sweep {record.get('sweep')!r}, not {sweep!r}"
    n_cells = record.get("n_cells")  # absent only from a description not written by db.write_sweep: not checked
    if "n_cells" in record and (not isinstance(n_cells, int) or isinstance(n_cells, bool) or n_cells < 0):
        return None, f"n_cells is {n_cells!r}, not a count"
    wrong = [k for k, kind in META_TYPES.items() if record.get(k) is not None and not isinstance(record[k], kind)]
    return (None, f"{', '.join(wrong)} of the wrong type") if wrong else (record, None)


def index_rows(path: str | os.PathLike) -> tuple[pa.Table | None, str | None]:
    """(one file of the catalog index, None), or (None, what is wrong with it); a newer schema version raises."""
    file, problem = open_parquet(path)
    rows, problem = (None, problem) if problem else read_whole(file)
    if problem:
        return None, problem
    assert rows is not None  # no problem: rows
    check_version((rows.schema.metadata or {}).get(VERSION_KEY, b"?").decode(errors="replace"), str(path))
    missing = [c for c in INDEX_COLUMNS if c not in rows.column_names]
    return (None, f"missing columns {missing}") if missing else (rows, None)


def checkpoint_problem(path: str | os.PathLike) -> str | None:
    """What is wrong with a checkpoint (torch's zip format), or None: every member read back against its CRC-32,
    which torch.load does not check (a garbled tensor loads as wrong weights)."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad = archive.testzip()
    except zipfile.BadZipFile as err:
        return f"not a readable checkpoint archive ({one_line(err)}: truncated or overwritten)"
    except (OSError, EOFError, zlib.error, ValueError) as err:
        return f"unreadable checkpoint archive ({one_line(err)})"
    return f"its member {bad} fails its CRC-32 check (garbled)" if bad else None


SWEEP_FILE_KINDS = {"sweep.json": "sweep meta", "cells.parquet": "plan"}


def kind_of(relative: str) -> str:
    """The kind of store file at `relative` (to the results directory): 'metrics shard', 'plan', 'checkpoint', …"""
    parts = Path(relative).parts
    if parts[0] == "runs" and len(parts) == 4:
        return f"{parts[2]} shard"
    if parts[0] == "sweeps":
        return "search cell" if "trials" in parts else SWEEP_FILE_KINDS.get(parts[-1], "sweep file")
    return {"index": "index", "checkpoints": "checkpoint"}.get(parts[0], "file")
