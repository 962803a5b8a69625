"""Everything a report says about a sweep, computed once: the comparison, LR sensitivity, stability, scale."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.cells import METRIC, MIN_EFFECT
from analysis.compare import compare, resolve_baseline
from analysis.comparison import COLUMNS
from analysis.frames import Sweep
from analysis.scale import rankings
from analysis.sensitivity import lr_sensitivity
from analysis.stability import stability
from db.sql import quote_ident


@dataclass
class Analysis:
    """One sweep analysed against its baseline on one metric."""

    sweep: Sweep
    metric: str
    baseline: str
    min_effect: float
    comparison: pd.DataFrame  # analysis.compare.COLUMNS, one row per (arm, lr)
    sensitivity: pd.DataFrame  # one row per arm
    stability: pd.DataFrame  # one row per arm
    scale: tuple[pd.DataFrame, list[str]] | None  # rankings per scale and reversals, when the sweep has a scale axis
    sql: list[str]  # the SQL behind the summary table

    def table(self) -> pd.DataFrame:
        """The report's summary: the comparison rows with each arm's LR sensitivity and stability beside them."""
        per_arm = self.sensitivity[["arm", "best_lr", "lr_sensitivity"]].merge(
            self.stability[["arm", "spike_score", "divergence_rate", "median_diverged_step", "peak_attn_logit"]], on="arm", how="outer")
        return self.comparison.merge(per_arm, on="arm", how="left")


def comparison_frame(rows: list[dict]) -> pd.DataFrame:
    """`compare`'s rows as a frame with exactly its COLUMNS (seeds_needed a nullable integer)."""
    frame = pd.DataFrame(rows, columns=COLUMNS)
    frame["seeds_needed"] = frame["seeds_needed"].astype("Int64")
    return frame


def analyse(sweep: Sweep, metric: str = METRIC, baseline: str | None = None, min_effect: float = MIN_EFFECT) -> Analysis:
    """Run every analysis of `sweep` (AnalysisError for an unknown metric or baseline, or no finished runs)."""
    comparison = comparison_frame(compare(sweep, metric, baseline, min_effect))
    baseline = resolve_baseline(sweep, baseline)
    sensitivity, sensitivity_sql = lr_sensitivity(sweep, metric)
    stable, stability_sql = stability(sweep)
    comparison_sql = sweep.sql(f"SELECT arm, lr, seed, status, {quote_ident(metric)} FROM sweep_runs ORDER BY arm, lr, seed")
    return Analysis(
        sweep, metric, baseline, min_effect, comparison, sensitivity, stable, rankings(sweep, metric),
        [comparison_sql, *sensitivity_sql, stability_sql],
    )
