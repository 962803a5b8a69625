"""`export`: one Parquet file per view, for Spark/Polars/pandas users who want files, not a connection."""

from __future__ import annotations

import os
from pathlib import Path

from db.recover import run_recovering
from db.sql import quote_literal

VIEWS = ("runs", "metrics", "layer_metrics", "events")


def _write_views(con, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for view in VIEWS:
        path = out / f"{view}.parquet"
        tmp = out / f".{view}.parquet.tmp-{os.getpid()}"
        con.execute(f"COPY (SELECT * FROM {view}) TO {quote_literal(str(tmp))} (FORMAT parquet, COMPRESSION zstd)")
        os.replace(tmp, path)
        written.append(path)
    return written


def export(results_dir: str | os.PathLike | None, out_dir: str | os.PathLike) -> list[Path]:
    """Write `<out_dir>/<view>.parquet` for every view (each atomically); return the paths written."""
    return run_recovering(results_dir, lambda con: _write_views(con, Path(out_dir)))
