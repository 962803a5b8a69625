"""Sweep plans in the results store: which cells (arm, lr, seed) a sweep asked for, and each cell's run id.

`<results>/sweeps/<sweep>/sweep.json` holds the sweep's description (question, baseline arm, axes) and
`cells.parquet` its plan, one row per cell, including the cell's three configs as JSON so that any worker,
on any host, can train a cell from the results directory alone. Both files are replaced atomically on
each launch. A search's trials are cells made as the search goes, and so are the confirmation cells that rerun
a finished search's chosen configuration on fresh seeds (`confirms`: the trial they confirm): each is one
write-once file under `trials/`. Membership lives here rather than in a run's manifest, so one run can serve several
sweeps. Reading them back, each file checked, is db/plans.py.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from db.errors import DbError
from db.schema import ensure_version_file
from db.validate import CHECKSUM, meta_checksum

SWEEPS_DIR = "sweeps"
SWEEP_FILE = "sweep.json"
CELLS_FILE = "cells.parquet"
SWEEP_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._=+-]{0,199}$")

CELL_SCHEMA = pa.schema([
    ("sweep", pa.string()), ("arm", pa.string()), ("arm_label", pa.string()), ("lr", pa.float64()),
    ("seed", pa.int64()), ("trial", pa.int64()), ("confirms", pa.int64()), ("run_id", pa.string()),
    ("cell", pa.int64()), ("matched_residual", pa.float64()), ("steps", pa.int64()), ("arm_values", pa.string()),
    ("model", pa.string()), ("train", pa.string()), ("data", pa.string()),
])
META_FIELDS = ("question", "baseline", "axes", "source", "n_cells", "created_at", "studies", "trials", "primary",
               "seeding")
# What an ablation's question is about (`Ablation(primary=...)`, sweep.json's `primary`): the report leads with it.
SIGNALS = ("loss", "divergence", "attn_logit", "lr_sensitivity")
TRIALS_DIR = "trials"
HISTORY_DIR = "history"


def check_sweep_name(sweep: str) -> None:
    """Sweep names become folder names: letters, digits and `._=+-`, starting with a letter or digit."""
    if not isinstance(sweep, str) or not SWEEP_NAME_PATTERN.match(sweep):
        raise DbError(
            f"sweep={sweep!r} is invalid: use 1-200 characters from letters, digits and '._=+-', "
            "starting with a letter or digit."
        )


def sweep_dir(results_dir: str | os.PathLike, sweep: str) -> Path:
    """The folder of one sweep's plan and report."""
    return Path(results_dir) / SWEEPS_DIR / sweep


def _replace_atomically(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


def _plan_table(rows: list[dict[str, Any]]) -> pa.Table:
    """The plan's rows as a CELL_SCHEMA table, built in DuckDB from one list per column: an Arrow table built
    from Python objects imports pandas (0.6 s of CPU in `harness sweep`, while its workers start)."""
    import duckdb

    from db.sql import quote_ident

    types = {pa.string(): "VARCHAR", pa.int64(): "BIGINT", pa.float64(): "DOUBLE"}
    select = ", ".join(f"unnest(${i + 1}::{types[f.type]}[]) AS {quote_ident(f.name)}"
                       for i, f in enumerate(CELL_SCHEMA))
    columns = [[row.get(name) for row in rows] for name in CELL_SCHEMA.names]
    return duckdb.connect().sql(f"SELECT {select}", params=columns).to_arrow_table().cast(CELL_SCHEMA)


def write_sweep(results_dir: str | os.PathLike, sweep: str, meta: Mapping[str, Any],
                cells: Iterable[Mapping[str, Any]]) -> Path:
    """Record sweep `sweep`'s description and plan (replacing an earlier launch's). `meta` may hold question,
    baseline, axes (list of switch names) and source; each cell row holds CELL_SCHEMA's columns (missing: NULL).
    Returns the sweep's folder."""
    check_sweep_name(sweep)
    unknown = sorted(set(meta) - set(META_FIELDS))
    if unknown:
        raise DbError(f"write_sweep: unknown meta field(s) {', '.join(unknown)}; valid: {', '.join(META_FIELDS)}.")
    rows = [dict(cell) for cell in cells]
    for i, row in enumerate(rows):
        bad = sorted(set(row) - set(CELL_SCHEMA.names))
        if bad:
            raise DbError(f"write_sweep: cell {i} has unknown column(s) {', '.join(bad)}; valid: "
                          f"{', '.join(CELL_SCHEMA.names)}.")
        row.setdefault("cell", i)
        row["sweep"] = sweep
    table = _plan_table(rows)
    results_dir = Path(results_dir)
    results_dir.mkdir(parents=True, exist_ok=True)
    ensure_version_file(results_dir)
    folder = sweep_dir(results_dir, sweep)
    record = json.loads(json.dumps({  # as readers will see it, so that its checksum is theirs
        "sweep": sweep, "question": None, "baseline": None, "axes": [], "source": None,
        **dict(meta), "n_cells": len(rows), "created_at": datetime.now(timezone.utc).isoformat(),
    }, default=str))
    record[CHECKSUM] = meta_checksum(record)
    _replace_atomically(folder / CELLS_FILE,
                        lambda tmp: pq.write_table(table, tmp, compression="zstd", write_page_checksum=True))
    _replace_atomically(folder / SWEEP_FILE, lambda tmp: tmp.write_text(json.dumps(record, indent=1, default=str)))
    return folder


def _write_once(path: Path, row: Mapping[str, Any]) -> Path:
    """One cell row as its own parquet file, unless the file exists: every worker computes the same row, and
    the first to write it wins."""
    if not path.exists():
        table = pa.Table.from_pylist([dict(row)], schema=CELL_SCHEMA)
        _replace_atomically(path, lambda tmp: pq.write_table(table, tmp, write_page_checksum=True))
    return path


def write_trial(results_dir: str | os.PathLike, sweep: str, study: int, cell: Mapping[str, Any]) -> Path:
    """Record one trial of study number `study` of a sweep (a cell row with its `trial` number), once."""
    check_sweep_name(sweep)
    row = {**dict(cell), "sweep": sweep}
    return _write_once(sweep_dir(results_dir, sweep) / TRIALS_DIR / f"s{study:04d}-t{row['trial']:06d}.parquet", row)


def write_confirmation(results_dir: str | os.PathLike, sweep: str, study: int, index: int,
                       cell: Mapping[str, Any]) -> Path:
    """Record confirmation cell `index` of study number `study` (a cell row with `confirms`, the trial it
    reruns on a fresh seed, and no `trial`), once."""
    check_sweep_name(sweep)
    row = {**dict(cell), "sweep": sweep}
    return _write_once(sweep_dir(results_dir, sweep) / TRIALS_DIR / f"s{study:04d}-c{index:06d}.parquet", row)


def archive_plan(results_dir: str | os.PathLike, sweep: str) -> Path:
    """Move the sweep's current plan (sweep.json, cells.parquet, trials/) to `history/<n>/`, n one more than the
    last; returns that folder. The sweep has no plan until the next `write_sweep`."""
    folder = sweep_dir(results_dir, sweep)
    history = folder / HISTORY_DIR
    history.mkdir(exist_ok=True)
    taken = [int(name) for name in os.listdir(history) if name.isdigit()]
    target = history / f"{max(taken, default=0) + 1:04d}"
    target.mkdir()
    for name in (TRIALS_DIR, CELLS_FILE, SWEEP_FILE):  # the description last: without it the sweep has no plan
        if (folder / name).exists():
            os.replace(folder / name, target / name)
    return target
