"""Each arm against the baseline: per-(arm, lr) means with t-intervals and paired, Holm-adjusted verdicts.

Only completed runs with a finite metric enter means and tests; diverged runs are counted in their own
column (a divergence is a result, but it has no loss to average). Arms are paired with the baseline at the
same LR on matched seeds (same seed = same data order). Lower is better.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from analysis import stats
from analysis.errors import AnalysisError
from analysis.frames import Sweep
from harness.config.base import closest

COLUMNS = [
    "arm", "lr", "n", "diverged", "mean", "ci_low", "ci_high", "delta", "delta_ci_low", "delta_ci_high",
    "p", "p_holm", "verdict", "seeds_needed",
]
METRIC = "final_val_loss"
MIN_EFFECT = 0.01  # nats


def check_metric(sweep: Sweep, metric: str) -> None:
    """AnalysisError unless `metric` is a numeric column of the sweep's runs."""
    numeric = [c for c in sweep.runs.columns if pd.api.types.is_numeric_dtype(sweep.runs[c]) and c not in ("lr", "seed", "trial")]
    if metric not in numeric:
        hint = closest(metric, numeric)
        raise AnalysisError(
            f"metric {metric!r} is not a numeric column of the runs view"
            + (f"; did you mean {hint!r}?" if hint else f"; numeric columns: {', '.join(numeric)}.")
        )


def check_finished(sweep: Sweep) -> None:
    """AnalysisError when the sweep has no completed or diverged run yet."""
    if sweep.finished.empty:
        raise AnalysisError(f"sweep {sweep.info.name!r} has no finished runs yet ({sweep.info.progress()}).")


def resolve_baseline(sweep: Sweep, baseline: str | None) -> str:
    """The asked baseline, else the sweep's, else an arm named 'baseline', else the first arm by name."""
    arms = sweep.arms
    chosen = baseline or sweep.info.baseline or ("baseline" if "baseline" in arms else arms[0])
    if chosen not in arms:
        hint = closest(chosen, arms)
        raise AnalysisError(
            f"baseline {chosen!r} is not an arm of sweep {sweep.info.name!r}"
            + (f"; did you mean {hint!r}?" if hint else f"; arms: {', '.join(map(repr, arms))}.")
        )
    return chosen


def _values(completed: pd.DataFrame, metric: str) -> pd.Series:
    """The metric per (arm, lr, seed), averaged where one seed has several runs (an arm's search trials)."""
    return completed.groupby(["arm", "lr", "seed"], dropna=False)[metric].mean()


def compare(sweep: Sweep, metric: str = METRIC, baseline: str | None = None, min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """One row per (arm, lr) with exactly `COLUMNS`; the baseline rows have empty deltas and verdict 'baseline'."""
    check_metric(sweep, metric)
    check_finished(sweep)
    if not min_effect > 0:
        raise AnalysisError(f"min_effect={min_effect!r} is invalid: must be a positive number (nats).")
    baseline = resolve_baseline(sweep, baseline)
    finished = sweep.finished
    completed = finished[(finished["status"] == "completed") & np.isfinite(finished[metric].astype(float))]
    values = _values(completed, metric)
    rows = []
    for (arm, lr), group in finished.groupby(["arm", "lr"], dropna=False):
        mine = _cell(values, arm, lr)
        interval = stats.t_interval(mine.to_numpy())
        row = {
            "arm": arm, "lr": lr, "n": interval.n, "diverged": int((group["status"] == "diverged").sum()),
            "mean": interval.mean, "ci_low": interval.low, "ci_high": interval.high, "comparison": None,
        }
        if arm != baseline:
            matched = pd.concat([mine, _cell(values, baseline, lr)], axis=1, join="inner")
            row["comparison"] = stats.paired(matched.iloc[:, 0], matched.iloc[:, 1])
        rows.append(row)
    return _finish(pd.DataFrame(rows), baseline, min_effect)


def _cell(values: pd.Series, arm: str, lr: float) -> pd.Series:
    """The per-seed values of one (arm, lr), indexed by seed (empty when it has none)."""
    mask = (values.index.get_level_values("arm") == arm) & (
        values.index.get_level_values("lr").isna() if pd.isna(lr) else values.index.get_level_values("lr") == lr
    )
    return values[mask].droplevel(["arm", "lr"])


def _finish(table: pd.DataFrame, baseline: str, min_effect: float) -> pd.DataFrame:
    """Add the delta columns, Holm-adjusted across every comparison of the table, verdicts and seeds needed."""
    comparisons = list(table.pop("comparison"))
    is_arm = [c is not None for c in comparisons]
    p = np.array([c.p if ok else math.nan for c, ok in zip(comparisons, is_arm)])
    p_holm = stats.holm(p)
    for column, pick in [("delta", "mean"), ("delta_ci_low", "low"), ("delta_ci_high", "high")]:
        table[column] = [getattr(c.delta, pick) if ok else math.nan for c, ok in zip(comparisons, is_arm)]
    table["p"], table["p_holm"] = p, p_holm
    table["verdict"] = [
        stats.verdict(c, ph, min_effect) if ok else "baseline" for c, ph, ok in zip(comparisons, p_holm, is_arm)
    ]
    table["seeds_needed"] = pd.array(
        [stats.seeds_needed(c.sd, min_effect) if ok else None for c, ok in zip(comparisons, is_arm)], dtype="Int64"
    )
    table = table.assign(_not_baseline=table["arm"] != baseline).sort_values(["_not_baseline", "arm", "lr"])
    return table[COLUMNS].reset_index(drop=True)
