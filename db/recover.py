"""Running a query so that a shard damaged inside its data pages costs a warning, not the answer.

Such a shard passes the cheap footer validation and fails only when DuckDB decodes it, with an error
that names no file. On an error of that kind, every shard is read in full once (`find_damaged`), the
damaged ones are left out with a warning, and the query runs once more on a fresh connection. Errors of
the SQL itself (parser, binder, catalog, a failed cast, a refused file outside the results directory,
an interrupt) are re-raised at once: they never trigger the full read, which costs seconds on a large store.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, TypeVar

from db.catalog import find_damaged
from db.connect import connect, load_catalog
from db.errors import StoreDamage

if TYPE_CHECKING:
    import duckdb

T = TypeVar("T")


def _sql_errors() -> tuple[type[Exception], ...]:
    """DuckDB errors of the SQL itself (or of the user), never of a damaged shard."""
    import duckdb

    return (duckdb.ParserException, duckdb.BinderException, duckdb.CatalogException, duckdb.ConversionException,
            duckdb.PermissionException, duckdb.InterruptException)


def run_recovering(results_dir: str | os.PathLike | None, work: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    """`work(connection)` on a fresh `db.connect(results_dir)`, retried once without damaged shards."""
    import duckdb

    try:
        return work(connect(results_dir))
    except _sql_errors():
        raise
    except duckdb.Error:
        if not find_damaged(load_catalog(results_dir)):
            raise
    return work(connect(results_dir))


def damaged_after(results_dir: str | os.PathLike | None, error: Exception) -> list[str]:
    """After a query failed with `error` on a connection already made: the shards that do not read back whole
    (remembered, so the next connection leaves them out); none when the error is the SQL's own or every shard
    reads back whole."""
    if isinstance(error, _sql_errors()):
        return []
    return find_damaged(load_catalog(results_dir))


def pages_damage(paths: list[str]) -> StoreDamage:
    """The error for shards whose pages do not decode, naming the first of them."""
    named = "; ".join(paths[:3]) + (f"; and {len(paths) - 3} more" if len(paths) > 3 else "")
    return StoreDamage(f"damaged data pages in {named}: `harness db check --repair` moves their runs aside, and the "
                       "next `harness sweep` trains them again.", tuple(paths))
