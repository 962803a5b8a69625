"""Running a query so that a shard damaged inside its data pages costs a warning, not the answer.

Such a shard passes the cheap footer validation and fails only when DuckDB decodes it, with an error
that names no file. On an error of that kind, every shard is read in full once (`find_damaged`), the
damaged ones are left out with a warning, and the query runs once more on a fresh connection. Errors of
the SQL itself (parser, binder, catalog, a failed cast, a refused file outside the results directory,
an interrupt) are re-raised at once: they never trigger the full read, which costs seconds on a large store.
"""

from __future__ import annotations

import os
from typing import Callable, TypeVar

from db.catalog import find_damaged
from db.connect import connect, load_catalog

T = TypeVar("T")


def run_recovering(results_dir: str | os.PathLike | None, work: Callable[[object], T]) -> T:
    """`work(connection)` on a fresh `db.connect(results_dir)`, retried once without damaged shards."""
    import duckdb

    try:
        return work(connect(results_dir))
    except (
        duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException, duckdb.ConversionException,
        duckdb.PermissionException, duckdb.InterruptException,
    ):
        raise
    except duckdb.Error:
        if not find_damaged(load_catalog(results_dir)):
            raise
    return work(connect(results_dir))
