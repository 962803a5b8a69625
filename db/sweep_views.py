"""The `sweep_cells` and `sweeps` views: sweep membership from the plans, joined to the `runs` view.

A sweep with a plan is exactly its plan's cells (a cell with no run yet is `pending`). Runs whose manifest
names a sweep that has no plan (written with `db.RunWriter` or `harness run --sweep`) form an implicit
sweep: their own arm and seed, `lr` from their config; not so a sweep whose plan is damaged (it is left out, and
named in `store_damage`). A cell whose run has a damaged file is `damaged` (db/damage_views.py). `arm_label` is
the arm's display label from the plan (NULL: show its name; always NULL in an implicit sweep).
"""

from __future__ import annotations

import json

import pyarrow as pa

from db.catalog import Catalog
from db.damage_views import create_damage_views
from db.plans import sweep_files
from db.sql import quote_literal
from db.sweeps import CELL_SCHEMA

PLAN_COLUMNS = ["sweep", "arm", "arm_label", "lr", "seed", "trial", "confirms", "run_id", "cell", "matched_residual",
                "steps", "arm_values"]
# Cells still to train: interrupted and crashed runs are resumed by the next worker that claims them.
WAITING = ("pending", "interrupted", "crashed")

_DUCK = {pa.string(): "VARCHAR", pa.float64(): "DOUBLE", pa.int64(): "BIGINT"}


def _plans_table(con, plans: list[str]) -> None:
    # Typed empty rows first, then the files by name: a column no file has yet (`confirms` in a plan written
    # before it existed) is NULL instead of an error, and the files' other columns are never read.
    empty = ", ".join(f"NULL::{_DUCK[CELL_SCHEMA.field(name).type]} AS {name}" for name in PLAN_COLUMNS)
    files = ""
    if plans:
        listing = ", ".join(map(quote_literal, plans))
        files = f" UNION ALL BY NAME SELECT * FROM read_parquet([{listing}], union_by_name = true)"
    con.execute(f"CREATE TABLE _plans AS SELECT {', '.join(PLAN_COLUMNS)} FROM (SELECT {empty} WHERE false{files})")


def _meta_table(con, records: list[dict]) -> None:
    # Plain DuckDB inserts: building an Arrow table from Python rows imports pandas (~0.4 s a connect).
    con.execute("CREATE TABLE _sweep_meta (sweep VARCHAR, question VARCHAR, baseline VARCHAR, axes VARCHAR, "
                "source VARCHAR, created_at TIMESTAMPTZ)")
    rows = [(r.get("sweep"), r.get("question"), r.get("baseline"), json.dumps(r.get("axes") or []), r.get("source"),
             r.get("created_at")) for r in records]
    if rows:
        con.executemany("INSERT INTO _sweep_meta VALUES (?, ?, ?, ?, ?, ?::TIMESTAMPTZ)", rows)


def create_sweep_views(con, catalog: Catalog) -> None:
    """Create `sweep_cells`, `sweeps`, `best_trials` and `store_damage` on a connection that already has the `runs`
    view; a sweep with a damaged plan file is left out of all of them but `store_damage` (db/plans.py)."""
    files = sweep_files(catalog.results_dir)
    _plans_table(con, files.plans)
    _meta_table(con, files.records)
    create_damage_views(con, catalog, files)
    run_columns = {row[0] for row in con.execute("DESCRIBE runs").fetchall()}
    run_lr = "r.lr" if "lr" in run_columns else "NULL::DOUBLE"
    con.execute(f"""
        CREATE VIEW sweep_cells AS
        SELECT p.*, CASE WHEN p.run_id IN (SELECT run_id FROM _damaged_runs) THEN 'damaged'
            ELSE coalesce(r.status, 'pending') END AS status
        FROM _plans p LEFT JOIN runs r USING (run_id)
        UNION ALL BY NAME
        SELECT r.sweep, r.arm, NULL::VARCHAR AS arm_label, {run_lr}::DOUBLE AS lr, r.seed, NULL::BIGINT AS trial,
            NULL::BIGINT AS confirms, r.run_id, NULL::BIGINT AS cell,
            NULL::DOUBLE AS matched_residual, NULL::BIGINT AS steps, NULL::VARCHAR AS arm_values, r.status
        FROM runs r
        WHERE r.sweep IS NOT NULL AND r.sweep NOT IN (SELECT sweep FROM _plans)
            AND r.sweep NOT IN (SELECT sweep FROM _damage WHERE sweep IS NOT NULL)
    """)
    waiting = ", ".join(map(quote_literal, WAITING))
    con.execute(f"""
        CREATE VIEW sweeps AS
        SELECT c.sweep, any_value(m.question) AS question, any_value(m.baseline) AS baseline,
            coalesce(any_value(m.axes), '[]') AS axes, count(*) AS n_cells,
            count(*) FILTER (WHERE c.status = 'completed') AS completed,
            count(*) FILTER (WHERE c.status = 'diverged') AS diverged,
            count(*) FILTER (WHERE c.status = 'pruned') AS pruned,
            count(*) FILTER (WHERE c.status = 'failed') AS failed,
            count(*) FILTER (WHERE c.status = 'damaged') AS damaged,
            count(*) FILTER (WHERE c.status = 'running') AS running,
            count(*) FILTER (WHERE c.status IN ({waiting})) AS pending,
            any_value(m.created_at) AS created_at
        FROM sweep_cells c LEFT JOIN _sweep_meta m USING (sweep)
        GROUP BY c.sweep ORDER BY c.sweep
    """)
    con.execute("""
        CREATE VIEW best_trials AS
        SELECT c.sweep, c.arm, c.seed, arg_min(c.trial, r.final_val_loss) AS trial,
            arg_min(c.run_id, r.final_val_loss) AS run_id, arg_min(c.arm_values, r.final_val_loss) AS params,
            min(r.final_val_loss) AS final_val_loss, count(*) AS trials
        FROM sweep_cells c JOIN runs r USING (run_id)
        WHERE c.trial IS NOT NULL AND r.status = 'completed'
        GROUP BY c.sweep, c.arm, c.seed ORDER BY c.sweep, c.arm, c.seed
    """)
