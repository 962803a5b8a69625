"""The read path: `connect` gives an in-memory DuckDB connection with the views; `engine` a SQLAlchemy engine.

Nothing here takes a file lock or writes: readers and any number of writers run side by side. Each
connection sees the shards published when it was made; reconnect (cheap: validated shards are cached)
to see newer rows.
"""

from __future__ import annotations

import os
from pathlib import Path

from db.catalog import Catalog, scan
from db.errors import NoResultsError, StoreDamage
from db.paths import resolve_results_dir
from db.schema import read_version_file
from db.views import create_views

HOW_TO_CREATE = ("create some with `harness run --preset tiny --steps 200`, or point --results / $HARNESS_RESULTS at "
                 "an existing results directory")


def load_catalog(results_dir: str | os.PathLike | None = None) -> Catalog:
    """Validated shard lists of the results directory; NoResultsError when it is missing or holds no runs,
    StoreDamage when it holds runs but none readable."""
    path = resolve_results_dir(results_dir)
    if not path.is_dir():
        raise NoResultsError(f"no results directory at {path}: {HOW_TO_CREATE}.")
    read_version_file(path)
    catalog = scan(path)
    if not catalog.n_runs and catalog.problems:
        first, problem = next(iter(catalog.problems.items()))
        raise StoreDamage(f"{path} holds no readable run: {len(catalog.problems)} damaged shard(s), the first {first} "
                          f"({problem}); `harness db check` names them all.", tuple(catalog.problems))
    if not catalog.n_runs:
        raise NoResultsError(f"{path} holds no runs yet: {HOW_TO_CREATE}.")
    return catalog


def connect(results_dir: str | os.PathLike | None = None):
    """An in-memory DuckDB connection with the views `runs`, `metrics`, `layer_metrics`, `events`.

    `results_dir` defaults as everywhere (`resolve_results_dir`). Corrupt shards are skipped with a
    `CorruptShardWarning`; data of a newer schema version raise `SchemaVersionError`.
    """
    import duckdb

    catalog = load_catalog(results_dir)
    con = duckdb.connect(":memory:")
    con.execute("SET parquet_metadata_cache = true")
    create_views(con, catalog)
    return con


def engine(results_dir: str | os.PathLike | None = None):
    """A SQLAlchemy engine (duckdb-engine) over the same views, e.g. for `pandas.read_sql("select * from runs",
    engine)`.

    Every checkout opens a fresh in-memory DuckDB with fresh views (no pooling), so each query sees the
    shards published by then.
    """
    import sqlalchemy as sa
    from sqlalchemy.pool import NullPool

    path = Path(resolve_results_dir(results_dir))
    load_catalog(path)  # fail now, with the helpful message, rather than at the first query
    result = sa.create_engine("duckdb:///:memory:", poolclass=NullPool)

    @sa.event.listens_for(result, "connect")
    def _create_views(dbapi_connection, _record) -> None:
        create_views(dbapi_connection, load_catalog(path))

    return result
