"""Tidy pandas frames of one sweep, each from SQL the report shows next to what it drew.

Every query's text is `WITH sweep_runs AS (<the sweep's runs>) <body>`, so the SQL under a figure runs as it
is in `harness db query`. Here `sweep_runs` is materialized once per connection as a temporary table of
exactly that SELECT, so a report evaluates the `runs` view once rather than once per figure.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import pandas as pd

from analysis.errors import AnalysisError
from analysis.source import FINISHED, SweepInfo, membership_sql, sweep_info
from db.sql import quote_literal

CURVE_POINTS = 300  # steps per plotted curve: longer histories are averaged into this many buckets


@dataclass
class Sweep:
    """One sweep's connection, progress and runs (a row per run: arm, lr, seed, status, config, results)."""

    con: object
    info: SweepInfo
    runs: pd.DataFrame
    members: str  # the SELECT behind `sweep_runs`

    def sql(self, body: str) -> str:
        """The full, runnable text of a query over `sweep_runs`."""
        return f"WITH sweep_runs AS ({self.members})\n{body.strip()}"

    def frame(self, body: str) -> tuple[pd.DataFrame, str]:
        """The query's result (run over the materialized `sweep_runs`) and its full text."""
        return self.con.sql(body).df(), self.sql(body)

    @property
    def finished(self) -> pd.DataFrame:
        """Runs that are results: completed or diverged."""
        return self.runs[self.runs["status"].isin(FINISHED)]

    @property
    def arms(self) -> list[str]:
        """The sweep's arms that have a run, by name."""
        return sorted(self.runs["arm"].dropna().unique())

    def stride(self, points: int = CURVE_POINTS) -> int:
        """Bucket width in steps so the longest finished run gives at most `points` points."""
        last = self.finished["last_step"].max()
        return max(1, math.ceil((0 if pd.isna(last) else last + 1) / points))


def load_sweep(results_dir: str | os.PathLike | None, sweep: str) -> Sweep:
    """Connect to the store and read `sweep`'s runs; AnalysisError for a missing store or unknown sweep."""
    import db

    try:
        con = db.connect(results_dir)
    except db.DbError as err:
        raise AnalysisError(str(err)) from err
    info = sweep_info(con, sweep)
    members = membership_sql(con, sweep)
    con.execute(f"CREATE TEMP TABLE sweep_runs AS {members}")
    runs = con.sql("SELECT * FROM sweep_runs").df()
    runs["arm"] = runs["arm"].astype(object).where(runs["arm"].notna(), "(none)")
    runs["lr"] = pd.to_numeric(runs["lr"], errors="coerce")
    return Sweep(con, info, runs, members)


def initial_losses(sweep: Sweep) -> tuple[pd.Series, str]:
    """Each run's first logged training loss (ℓ₀, the loss at initialization), by run_id."""
    frame, text = sweep.frame("""
        SELECT m.run_id, arg_min(m.value, m.step) AS initial_loss
        FROM metrics m WHERE m.name = 'train_loss' AND m.run_id IN (SELECT run_id FROM sweep_runs)
        GROUP BY m.run_id
    """)
    return frame.set_index("run_id")["initial_loss"], text


def curves(sweep: Sweep, metric: str, points: int = CURVE_POINTS, statuses=("completed",)) -> tuple[pd.DataFrame, str]:
    """Per run with one of `statuses`: finite values of `metric` averaged over step buckets
    (arm, lr, seed, run_id, step, value)."""
    stride = sweep.stride(points)
    wanted = ", ".join(map(quote_literal, statuses))
    return sweep.frame(f"""
        SELECT r.arm, r.lr, r.seed, m.run_id, m.step // {stride} * {stride} AS step, avg(m.value) AS value
        FROM metrics m JOIN sweep_runs r USING (run_id)
        WHERE m.name = {quote_literal(metric)} AND r.status IN ({wanted}) AND isfinite(m.value)
        GROUP BY ALL ORDER BY m.run_id, step
    """)
