"""The SQL views users query: `runs`, `metrics`, `layer_metrics`, `events` (columns documented in docs/db.md).

Views read the validated shard lists of a `Catalog` (so a corrupt file is never touched). Manifest and
status shards are tiny and read once into tables; data shards stay on disk and are scanned per query.
Only the segments that count are read (`db/segments.py`: a segment opened by a writer that had lost its claim,
or after the run's result, is ignored whole). Resumed runs: rows a counting segment logged at steps ≥ the
start step of a later counting segment are hidden, so every step appears once, from the segment that logged
it last.
"""

from __future__ import annotations

import os

import pyarrow as pa

from db.catalog import Catalog
from db.index import SOURCE_COLUMNS, current_sources
from db.liveness import dead_segments
from db.provenance import CODE_COLUMNS, PROVENANCE_COLUMNS
from db.schema import CONFIG_PREFIX, DATA_SCHEMAS, MANIFEST_SCHEMA, STATUS_SCHEMA
from db.segments import COUNTING_SEGMENTS_SQL
from db.sql import quote_ident, quote_literal
from db.sweep_views import create_sweep_views

VAL_LOSS = "val_loss"
TRAIN_LOSS = "train_loss"

_DUCK_TYPES = {
    pa.string(): "VARCHAR", pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN",
    pa.timestamp("us", tz="UTC"): "TIMESTAMPTZ",
}

# Public columns of each data view, in order (the shard's `segment` column stays internal).
DATA_VIEW_COLUMNS = {table: [n for n in schema.names if n != "segment"] for table, schema in DATA_SCHEMAS.items()}

# Which code made the run (db/provenance.py): the code's three columns, how many code versions made it, the rest.
CODE_VIEW_COLUMNS = [*CODE_COLUMNS, "code_versions", *PROVENANCE_COLUMNS[len(CODE_COLUMNS):]]

# The runs view's columns around the config columns, in order (tests/db/test_views.py holds the SELECT to them).
RUNS_LEADING = ["run_id", "sweep", "arm", "seed", "status"]
RUNS_TRAILING = [
    "params", "flops_per_token", "started_at", "finished_at", "final_val_loss", "best_val_loss",
    "diverged_at_step", "final_train_loss", "last_step", "n_segments", "host", *CODE_VIEW_COLUMNS, "summary", "config",
]


def _source(files: list[str], fields: list[tuple[str, pa.DataType]], union_by_name: bool = False) -> str:
    """A SELECT over the shard files, or an empty SELECT with the same typed columns when there are none."""
    if files:
        listing = ", ".join(map(quote_literal, files))
        options = ", union_by_name = true" if union_by_name else ""
        return f"SELECT * FROM read_parquet([{listing}]{options})"
    columns = ", ".join(f"NULL::{_DUCK_TYPES[kind]} AS {quote_ident(name)}" for name, kind in fields)
    return f"SELECT {columns} WHERE false"


def _fields(schema: pa.Schema) -> list[tuple[str, pa.DataType]]:
    return [(f.name, f.type) for f in schema]


def _config_columns(con) -> list[str]:
    """`config.x AS x` for each config key; a key that clashes with a fixed runs column keeps its prefix."""
    names = [row[0] for row in con.execute("DESCRIBE _manifests").fetchall() if row[0].startswith(CONFIG_PREFIX)]
    fixed = set(RUNS_LEADING) | set(RUNS_TRAILING)
    return [
        f"f.{quote_ident(name)} AS "
        f"{quote_ident(name if name[len(CONFIG_PREFIX):] in fixed else name[len(CONFIG_PREFIX):])}"
        for name in sorted(names)
    ]


def _data_view(con, table: str, files: list[str], dedup: bool) -> None:
    con.execute(f"CREATE VIEW _{table}_shards AS {_source(files, _fields(DATA_SCHEMAS[table]))}")
    columns = ", ".join(f"d.{c}" for c in DATA_VIEW_COLUMNS[table])
    if not dedup:  # no run was resumed over logged steps: skip the join
        con.execute(f"CREATE VIEW {table} AS SELECT {columns} FROM _{table}_shards d")
        return
    con.execute(
        f"CREATE VIEW {table} AS SELECT {columns} FROM _{table}_shards d "
        "LEFT JOIN _superseded s ON d.run_id = s.run_id AND d.segment = s.segment "
        "WHERE s.superseded_from IS NULL OR d.step < s.superseded_from"
    )


def _row_table(con, catalog: Catalog, table: str, name: str, schema: pa.Schema) -> None:
    """Materialize manifest or status rows: unchanged ones from the index, the rest from their shards."""
    if catalog.index is None:
        con.execute(f"CREATE TABLE {name} AS {_source(catalog.files[table], _fields(schema), union_by_name=True)}")
        return
    current = current_sources(catalog.index, table, catalog.results_dir, catalog.stats)
    covered = {os.path.join(catalog.results_dir, source) for source in current}
    fresh = [f for f in catalog.files[table] if f not in covered]
    # Filtered in DuckDB rather than pyarrow: building Arrow arrays from Python imports pandas (~0.4 s a CLI call).
    con.register("_indexed_rows", catalog.index.rows[table])
    con.execute(
        f"CREATE TABLE {name} AS SELECT * EXCLUDE ({', '.join(SOURCE_COLUMNS)}) FROM _indexed_rows "
        "WHERE _source IN (SELECT unnest($1::VARCHAR[])) UNION ALL BY NAME "
        f"{_source(fresh, _fields(schema), union_by_name=True)}",
        [current],
    )
    con.unregister("_indexed_rows")


# One row per run from its counting segments: the first segment's labels and configs, the last one's outcome, the
# provenance of the last one that recorded it, and how many code versions those that recorded it were made by.
RUNS_VIEW_SQL = """
        CREATE VIEW runs AS
        WITH first_segment AS (
            SELECT * EXCLUDE (status) FROM _counting
            QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY segment) = 1
        ), last_segment AS (
            SELECT run_id, max(segment) AS segment, count(*) AS n_segments, arg_max(host, segment) AS host
            FROM _counting GROUP BY run_id
        ), outcome AS (
            SELECT s.* FROM _status s JOIN last_segment l USING (run_id, segment)
        ), recorded AS (
            SELECT * FROM _counting WHERE harness_version IS NOT NULL
        ), code AS (
            SELECT r.*, v.code_versions FROM recorded r JOIN (
                SELECT run_id, max(segment) AS segment, count(DISTINCT ({code})) AS code_versions
                FROM recorded GROUP BY run_id
            ) v USING (run_id, segment)
        ), progress AS (
            SELECT run_id,
                arg_max(value, step) FILTER (WHERE name = '{val_loss}') AS final_val_loss,
                min(value) FILTER (WHERE name = '{val_loss}') AS best_val_loss,
                arg_max(value, step) FILTER (WHERE name = '{train_loss}') AS final_train_loss,
                max(step) AS last_step
            FROM metrics GROUP BY run_id
        )
        SELECT f.run_id, f.sweep, f.arm, f.seed,
            coalesce(o.status, CASE WHEN d.run_id IS NULL THEN 'running' ELSE 'crashed' END) AS status,
            {config_columns}
            f.params, f.flops_per_token, f.started_at, o.finished_at, p.final_val_loss, p.best_val_loss,
            o.diverged_at_step, p.final_train_loss, p.last_step, l.n_segments, l.host,
            {code_columns}, o.summary, f.config
        FROM first_segment f
        JOIN last_segment l USING (run_id)
        LEFT JOIN outcome o USING (run_id)
        LEFT JOIN code c USING (run_id)
        LEFT JOIN _dead d ON d.run_id = l.run_id AND d.segment = l.segment
        LEFT JOIN progress p USING (run_id)
"""


def _segment_tables(con, catalog: Catalog) -> None:
    """`_manifests`, `_status`, `_segments`, the counting segments (`_counting`, db/segments.py) and the rows to
    hide (`_superseded`)."""
    _row_table(con, catalog, "manifest", "_manifests", MANIFEST_SCHEMA)
    _row_table(con, catalog, "status", "_status", STATUS_SCHEMA)
    con.execute("ALTER TABLE _manifests ADD COLUMN IF NOT EXISTS claim BIGINT")  # a store from before fencing
    for name in PROVENANCE_COLUMNS:  # a store from before provenance
        kind = _DUCK_TYPES[MANIFEST_SCHEMA.field(name).type]
        con.execute(f"ALTER TABLE _manifests ADD COLUMN IF NOT EXISTS {quote_ident(name)} {kind}")
    con.execute("CREATE VIEW _segments AS SELECT m.*, s.status FROM _manifests m LEFT JOIN _status s USING (run_id, "
                "segment)")
    con.execute(f"CREATE TABLE _counting AS {COUNTING_SEGMENTS_SQL}")
    # Rows to hide: a counting segment's from the start step of a later counting one (a resume), and every row
    # of a segment that does not count (from step 0).
    con.execute(
        "CREATE TABLE _superseded AS SELECT * FROM ("
        "  SELECT run_id, segment, min(start_step) OVER (PARTITION BY run_id ORDER BY segment"
        "    ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS superseded_from FROM _counting"
        ") WHERE superseded_from IS NOT NULL "
        "UNION ALL SELECT run_id, segment, 0 FROM _manifests ANTI JOIN _counting USING (run_id, segment)"
    )


def create_views(con, catalog: Catalog) -> None:
    """Create the internal tables and the public views (runs, metrics, layer_metrics, events, sweep_cells, sweeps)."""
    _segment_tables(con, catalog)
    dedup = con.execute("SELECT count(*) FROM _superseded").fetchall()[0][0] > 0
    for table in DATA_SCHEMAS:
        _data_view(con, table, catalog.files[table], dedup)
    con.execute("CREATE TABLE _dead (run_id VARCHAR, segment INTEGER)")
    dead = dead_segments(con)
    if dead:
        con.executemany("INSERT INTO _dead VALUES (?, ?)", dead)
    config_columns = "".join(f"{c}, " for c in _config_columns(con))
    con.execute(RUNS_VIEW_SQL.format(
        config_columns=config_columns, val_loss=VAL_LOSS, train_loss=TRAIN_LOSS, code=", ".join(CODE_COLUMNS),
        code_columns=", ".join(f"c.{name}" for name in CODE_VIEW_COLUMNS),
    ))
    create_sweep_views(con, catalog)
