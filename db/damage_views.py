"""What connecting left out as damaged, for queries: the `store_damage` view, and runs marked `damaged`.

Every file that fails its check (db/validate.py) is skipped with a warning (db/catalog.py, db/plans.py). So that no
reader mistakes what is left for the whole answer:
- `store_damage` has one row per damaged file: `path` (relative to the results directory), `kind` ('metrics
  shard', 'plan', …), `problem`, and `run_id` (a run's shard) or `sweep` (a sweep's plan files);
- a run with a damaged shard has the status `damaged` in `runs` and `sweep_cells`, whatever its readable files
  say: its metrics or its outcome may be missing, so it is neither a result nor still running. Its cell waits for
  `harness db check --repair` (which moves the run aside) and the next `harness sweep`, which trains it again.
"""

from __future__ import annotations

import os

from db.catalog import Catalog
from db.plans import SweepFiles
from db.validate import kind_of


def _rows(catalog: Catalog, plans: SweepFiles) -> list[tuple]:
    root = catalog.results_dir
    rows: list[tuple] = []
    for path, problem in catalog.problems.items():
        relative = os.path.relpath(path, root)
        rows.append((relative, kind_of(relative), problem, relative.split(os.sep)[1], None))
    for damaged in plans.damaged:
        relative = os.path.relpath(damaged.path, root)
        rows.append((relative, kind_of(relative), damaged.problem, None, damaged.sweep))
    return rows


# The outcome `runs` shows is the status row of a run's latest counting segment (db/views.py): a damaged run's
# says `damaged`, replacing the one read or added where its status shard was unreadable. `_counting` is settled
# before this runs, so the mark changes no decision of which segments count.
MARK_DAMAGED_RUNS = """
CREATE TABLE _damaged_runs AS SELECT DISTINCT run_id FROM _damage WHERE run_id IS NOT NULL;
CREATE TABLE _damaged_latest AS SELECT run_id, max(segment) AS segment FROM _counting
    WHERE run_id IN (SELECT run_id FROM _damaged_runs) GROUP BY run_id;
UPDATE _status SET status = 'damaged' FROM _damaged_latest l
    WHERE _status.run_id = l.run_id AND _status.segment = l.segment;
INSERT INTO _status BY NAME SELECT l.run_id, l.segment, 'damaged' AS status FROM _damaged_latest l
    ANTI JOIN _status s USING (run_id, segment);
"""


def create_damage_views(con, catalog: Catalog, plans: SweepFiles) -> None:
    """`store_damage`, `_damaged_runs`, and the mark on damaged runs, on a connection with the segment tables."""
    con.execute("CREATE TABLE _damage (path VARCHAR, kind VARCHAR, problem VARCHAR, run_id VARCHAR, sweep VARCHAR)")
    rows = _rows(catalog, plans)
    if rows:
        con.executemany("INSERT INTO _damage VALUES (?, ?, ?, ?, ?)", rows)
    con.execute("CREATE VIEW store_damage AS SELECT * FROM _damage ORDER BY path")
    con.execute(MARK_DAMAGED_RUNS)
