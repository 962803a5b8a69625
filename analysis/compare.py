"""Each arm against the baseline: per-(arm, lr) means with t-intervals and paired, Holm-adjusted verdicts.

Only completed runs with a finite metric enter means and tests; diverged runs are counted in their own
column (a divergence is a result, but it has no loss to average). Arms are paired with the baseline at the
same LR on matched seeds (same seed = same data order). Lower is better. A searched arm (`tune=`) enters
each seed with its best completed trial (the `best_trials` rule), at its study's LR, or with an empty LR
when the search tunes the LR itself.

Works on a `SweepSource` without pandas, so `harness compare` skips its import.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from analysis import stats
from analysis.errors import AnalysisError
from analysis.source import FINISHED, SweepSource
from db.sql import quote_ident
from harness.config.base import closest

COLUMNS = [
    "arm", "lr", "n", "diverged", "mean", "ci_low", "ci_high", "delta", "delta_ci_low", "delta_ci_high",
    "p", "p_holm", "verdict", "seeds_needed",
]
METRIC = "final_val_loss"
MIN_EFFECT = 0.01  # nats
NUMERIC = ("DOUBLE", "FLOAT", "REAL", "DECIMAL", "BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT", "UINTEGER")
NOT_METRICS = ("lr", "seed", "trial")


def check_metric(sweep: SweepSource, metric: str) -> None:
    """AnalysisError unless `metric` is a numeric column of the sweep's runs."""
    numeric = [name for name, kind in sweep.column_types().items() if kind.startswith(NUMERIC) and name not in NOT_METRICS]
    if metric not in numeric:
        hint = closest(metric, numeric)
        raise AnalysisError(
            f"metric {metric!r} is not a numeric column of the runs view"
            + (f"; did you mean {hint!r}?" if hint else f"; numeric columns: {', '.join(numeric)}.")
        )


def check_finished(sweep: SweepSource) -> None:
    """AnalysisError when the sweep has no completed or diverged run yet."""
    if not sweep.n_finished_runs:
        raise AnalysisError(f"sweep {sweep.info.name!r} has no finished runs yet ({sweep.info.progress()}).")


def resolve_baseline(sweep: SweepSource, baseline: str | None) -> str:
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


# A search trial's LR is its study's, unless the LR is one of the tuned parameters (then every trial has its own).
CELLS_SQL = """
SELECT arm, CASE WHEN trial IS NOT NULL AND json_extract(arm_values, '$.lr') IS NOT NULL THEN NULL ELSE lr END,
    seed, trial IS NOT NULL, status, {metric}
FROM sweep_runs WHERE status IN {finished}
"""


def _cells(sweep: SweepSource, metric: str) -> dict[tuple, dict]:
    """(arm, lr) → {"seeds": {seed: [values of completed runs]}, "diverged": count, "searched": bool}."""
    cells = defaultdict(lambda: {"seeds": defaultdict(list), "diverged": 0, "searched": False})
    for arm, lr, seed, trial, status, value in sweep.rows(CELLS_SQL.format(metric=quote_ident(metric), finished=FINISHED)):
        cell = cells[(arm, lr)]
        cell["searched"] |= trial
        if status == "diverged":
            cell["diverged"] += 1
        elif value is not None and math.isfinite(value):
            cell["seeds"][seed].append(float(value))
    return cells


def _per_seed(cell: dict | None) -> dict:
    """seed → its value: a search's best trial, else the mean of the seed's runs (normally one)."""
    if cell is None:
        return {}
    pick = min if cell["searched"] else np.mean
    return {seed: float(pick(values)) for seed, values in cell["seeds"].items()}


def compare(sweep: SweepSource, metric: str = METRIC, baseline: str | None = None, min_effect: float = MIN_EFFECT) -> list[dict]:
    """One row (a dict of `COLUMNS`) per (arm, lr), the baseline's first; its delta fields are NaN (None for
    seeds_needed) and its verdict 'baseline'."""
    check_metric(sweep, metric)
    check_finished(sweep)
    if not min_effect > 0:
        raise AnalysisError(f"min_effect={min_effect!r} is invalid: must be a positive number (nats).")
    baseline = resolve_baseline(sweep, baseline)
    cells = _cells(sweep, metric)
    order = sorted(cells, key=lambda key: (key[0] != baseline, key[0], key[1] is None, key[1] or 0.0))
    rows, comparisons = [], []
    for arm, lr in order:
        mine = _per_seed(cells[(arm, lr)])
        interval = stats.t_interval(list(mine.values()))
        rows.append({"arm": arm, "lr": lr, "n": interval.n, "diverged": cells[(arm, lr)]["diverged"],
                     "mean": interval.mean, "ci_low": interval.low, "ci_high": interval.high})
        theirs = _per_seed(cells.get((baseline, lr)))
        matched = sorted(set(mine) & set(theirs))
        comparisons.append(None if arm == baseline else stats.paired([mine[s] for s in matched], [theirs[s] for s in matched]))
    p_holm = stats.holm([c.p if c else math.nan for c in comparisons])
    for row, comparison, adjusted in zip(rows, comparisons, p_holm):
        row.update(_delta_fields(comparison, float(adjusted), min_effect))
    return rows


def _delta_fields(comparison: stats.Paired | None, p_holm: float, min_effect: float) -> dict:
    if comparison is None:
        return {"delta": math.nan, "delta_ci_low": math.nan, "delta_ci_high": math.nan, "p": math.nan,
                "p_holm": math.nan, "verdict": "baseline", "seeds_needed": None}
    delta = comparison.delta
    return {
        "delta": delta.mean, "delta_ci_low": delta.low, "delta_ci_high": delta.high, "p": comparison.p, "p_holm": p_holm,
        "verdict": stats.verdict(comparison, p_holm, min_effect), "seeds_needed": stats.seeds_needed(comparison.sd, min_effect),
    }
