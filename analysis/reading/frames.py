"""Tidy pandas frames of one sweep, each from SQL the report shows next to what it drew.

Every query's text is `WITH sweep_runs AS (<the sweep's runs>) <body>`, so the SQL under a figure runs as it
is in `harness db query`; here it runs over the materialized `sweep_runs` (see `analysis.reading.source.SweepSource`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import pandas as pd

from analysis.reading.source import FINISHED, SweepSource, open_sweep
from db.sql import quote_literal

CURVE_POINTS = 300  # steps per plotted curve: longer histories are averaged into this many buckets


@dataclass
class Sweep(SweepSource):
    """A sweep with its runs as a frame (a row per run: arm, lr, seed, status, config, results)."""

    runs: pd.DataFrame

    def frame(self, body: str) -> tuple[pd.DataFrame, str]:
        """The query's result (run over the materialized `sweep_runs`) and its full text."""
        return self.checked(lambda: self.con.sql(body).df()), self.sql(body)

    @property
    def finished(self) -> pd.DataFrame:
        """Runs that are results: completed or diverged."""
        return self.runs[self.runs["status"].isin(FINISHED)]

    def stride(self, points: int = CURVE_POINTS) -> int:
        """Bucket width in steps so the longest finished run gives at most `points` points."""
        last = self.finished["last_step"].max()
        return max(1, math.ceil((0 if pd.isna(last) else last + 1) / points))


def load_sweep(results_dir: str | os.PathLike | None, sweep: str) -> Sweep:
    """`open_sweep` plus the runs frame; AnalysisError for a missing store or unknown sweep, StoreDamage for a
    damaged file of the sweep."""
    source = open_sweep(results_dir, sweep)
    return Sweep(source.con, source.info, source.members, source.results_dir, runs_frame(source.con))


def runs_frame(con) -> pd.DataFrame:
    """The open sweep's `sweep_runs`, in run-id order (DuckDB's scan order changes under load: one order makes
    pages and tables repeat), its LR numeric."""
    runs = con.sql("SELECT * FROM sweep_runs ORDER BY run_id").df()
    return runs.assign(lr=pd.to_numeric(runs["lr"], errors="coerce"))


# ℓ₀: training records the loss at step 0, before any update, as the metric `initial_loss` (docs/internals.md);
# a store written before that falls back to the run's first logged training loss, which with log_every > 1 is
# already some steps into training (too low), so each run says which it has.
INITIAL_FROM_STEP_0 = "step 0"
INITIAL_FROM_TRAIN_LOSS = "first logged train_loss"


def initial_losses(sweep: Sweep) -> tuple[pd.DataFrame, str]:
    """Each run's loss at initialization ℓ₀, by run_id: columns initial_loss and initial_from (one of the two
    sources above)."""
    frame, text = sweep.frame(f"""
        SELECT m.run_id,
            coalesce(arg_min(m.value, m.step) FILTER (WHERE m.name = 'initial_loss' AND m.step = 0),
                     arg_min(m.value, m.step) FILTER (WHERE m.name = 'train_loss')) AS initial_loss,
            CASE WHEN count(*) FILTER (WHERE m.name = 'initial_loss' AND m.step = 0) > 0
                 THEN '{INITIAL_FROM_STEP_0}' ELSE '{INITIAL_FROM_TRAIN_LOSS}' END AS initial_from
        FROM metrics m WHERE m.name IN ('initial_loss', 'train_loss') AND m.run_id IN (SELECT run_id FROM sweep_runs)
        GROUP BY m.run_id
    """)
    return frame.set_index("run_id"), text


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
