"""The comparison table from a sweep's finished cells: per-(arm, lr) means with t-intervals and paired,
Holm-adjusted verdicts against the baseline.

Only completed runs with a finite metric enter means and tests; diverged runs are counted in their own
column (a divergence is a result, but it has no loss to average). Arms are paired with the baseline at the
same LR on matched seeds (same seed = same data order). Lower is better. A searched arm (`tune=`) enters
each seed with its best completed trial (the `best_trials` rule), at its study's LR, or with an empty LR
when the search tunes the LR itself.

No store access here (`analysis.compare` reads the cells): `harness compare` imports this module, and with it
scipy.stats (~1 s), while a child process reads the store.
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from analysis import stats
from analysis.cells import MIN_EFFECT, Cells
from analysis.errors import AnalysisError

COLUMNS = [
    "arm", "lr", "n", "diverged", "mean", "ci_low", "ci_high", "delta", "delta_ci_low", "delta_ci_high",
    "p", "p_holm", "verdict", "seeds_needed",
]


def _grouped(cells: Cells) -> dict[tuple, dict]:
    """(arm, lr) → {"seeds": {seed: [values of completed runs]}, "diverged": count, "searched": bool}."""
    grouped = defaultdict(lambda: {"seeds": defaultdict(list), "diverged": 0, "searched": False})
    for arm, lr, seed, searched, status, value in cells.runs:
        cell = grouped[(arm, lr)]
        cell["searched"] |= searched
        if status == "diverged":
            cell["diverged"] += 1
        elif value is not None and math.isfinite(value):
            cell["seeds"][seed].append(float(value))
    return grouped


def _per_seed(cell: dict | None) -> dict:
    """seed → its value: a search's best trial, else the mean of the seed's runs (normally one)."""
    if cell is None:
        return {}
    pick = min if cell["searched"] else np.mean
    return {seed: float(pick(values)) for seed, values in cell["seeds"].items()}


def comparison_table(cells: Cells, min_effect: float = MIN_EFFECT) -> list[dict]:
    """One row (a dict of `COLUMNS`) per (arm, lr), the baseline's first; its delta fields are NaN (None for
    seeds_needed) and its verdict 'baseline'."""
    if not min_effect > 0:
        raise AnalysisError(f"min_effect={min_effect!r} is invalid: must be a positive number (nats).")
    baseline, grouped = cells.baseline, _grouped(cells)
    order = sorted(grouped, key=lambda key: (key[0] != baseline, key[0], key[1] is None, key[1] or 0.0))
    rows, comparisons = [], []
    for arm, lr in order:
        mine = _per_seed(grouped[(arm, lr)])
        interval = stats.t_interval(list(mine.values()))
        rows.append({"arm": arm, "lr": lr, "n": interval.n, "diverged": grouped[(arm, lr)]["diverged"],
                     "mean": interval.mean, "ci_low": interval.low, "ci_high": interval.high})
        theirs = _per_seed(grouped.get((baseline, lr)))
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
