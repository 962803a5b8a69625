"""Everything a report says about a sweep, computed once: the comparison, LR sensitivity, stability, scale."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.cells import METRIC, MIN_EFFECT
from analysis.compare import compare, resolve_baseline
from analysis.comparison import COLUMNS
from analysis.frames import Sweep
from analysis.scale import ScaleComparison, compare_across
from analysis.sensitivity import lr_sensitivity
from analysis.stability import stability
from db.sql import quote_ident

# The per-arm table (`harness summary`): where each arm trains best and how stably, over all its LRs.
PER_ARM_COLUMNS = [
    "arm", "lrs", "best_lr", "best_loss", "lr_sensitivity", "initial_loss", "initial_loss_from", "runs", "diverged",
    "divergence_rate", "median_diverged_step", "loss_spikes", "spike_score", "peak_attn_logit", "peak_layer",
    "logit_growth", "log_z_growth",
]
# Of those, the ones the report's summary shows beside each comparison row.
BESIDE_COMPARISON = ["best_lr", "lr_sensitivity", "spike_score", "divergence_rate", "median_diverged_step", "peak_attn_logit"]
COUNTS = ("seeds", "n_pairs", "arm_diverged", "baseline_diverged", "n", "seeds_needed")


@dataclass
class Analysis:
    """One sweep analysed against its baseline on one metric."""

    sweep: Sweep
    metric: str
    baseline: str
    min_effect: float
    comparison: pd.DataFrame  # analysis.comparison.COLUMNS, one row per (arm, lr)
    sensitivity: pd.DataFrame  # one row per arm
    stability: pd.DataFrame  # one row per arm
    scale: ScaleComparison | None  # when the sweep has a scale axis
    sql: list[str]  # the SQL behind the summary table

    def per_arm(self) -> pd.DataFrame:
        """`PER_ARM_COLUMNS`, one row per arm: its LR sensitivity and stability side by side."""
        return per_arm_table(self.sensitivity, self.stability)

    def table(self) -> pd.DataFrame:
        """The report's summary: the comparison rows with each arm's LR sensitivity and stability beside them."""
        return self.comparison.merge(self.per_arm()[["arm", *BESIDE_COMPARISON]], on="arm", how="left")


def comparison_frame(rows: list[dict]) -> pd.DataFrame:
    """`compare`'s rows as a frame with exactly its COLUMNS (counts nullable integers, survivors_only nullable)."""
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for column in COUNTS:
        frame[column] = frame[column].astype("Int64")
    frame["survivors_only"] = frame["survivors_only"].astype("boolean")
    return frame


def analyse(sweep: Sweep, metric: str = METRIC, baseline: str | None = None, min_effect: float = MIN_EFFECT) -> Analysis:
    """Run every analysis of `sweep` (AnalysisError for an unknown metric or baseline, or no finished runs)."""
    comparison = comparison_frame(compare(sweep, metric, baseline, min_effect))
    baseline = resolve_baseline(sweep, baseline)
    sensitivity, sensitivity_sql = lr_sensitivity(sweep, metric)
    stable, stability_sql = stability(sweep, metric)
    comparison_sql = sweep.sql(f"SELECT arm, lr, seed, status, {quote_ident(metric)} FROM sweep_runs ORDER BY arm, lr, seed")
    return Analysis(
        sweep, metric, baseline, min_effect, comparison, sensitivity, stable, compare_across(sweep, metric),
        [comparison_sql, *sensitivity_sql, stability_sql],
    )


def per_arm_table(sensitivity: pd.DataFrame, stable: pd.DataFrame) -> pd.DataFrame:
    """`PER_ARM_COLUMNS` from the LR sensitivity and stability tables (one row per arm each)."""
    merged = sensitivity.merge(stable, on="arm", how="outer")
    merged["peak_layer"] = merged["peak_layer"].astype("Int64")
    return merged[PER_ARM_COLUMNS]


def per_arm(sweep: Sweep, metric: str = METRIC) -> tuple[pd.DataFrame, list[str]]:
    """The per-arm table alone (`harness summary`: no baseline, no comparison) and the SQL behind it."""
    sensitivity, sensitivity_sql = lr_sensitivity(sweep, metric)
    stable, stability_sql = stability(sweep, metric)
    return per_arm_table(sensitivity, stable), [*sensitivity_sql, stability_sql]
