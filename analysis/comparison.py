"""The comparison table from a sweep's finished cells: per-(arm, lr) means with t-intervals, and against the
baseline at the same LR on matched seeds both the divergences and the loss, with Holm-adjusted verdicts.

A seed's outcome is its completed value (a searched arm's best completed trial, the `best_trials` rule; else
the mean of the seed's runs, normally one) or, when none of its runs completed, a divergence (a diverged run,
or a completed one whose metric is not finite: `analysis.outcomes`). Means are over completed seeds. The
pairing, the tests and the verdict rules are `analysis.pairs` and `analysis.verdicts`. Lower is better.

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
from analysis.pairs import DIVERGED, compare_pairs
from analysis.verdicts import holm_family, verdicts

COLUMNS = [
    "arm", "lr", "seeds", "diverged", "mean", "ci_low", "ci_high",
    "n_pairs", "arm_diverged", "baseline_diverged", "p_stability", "p_stability_holm",
    "n", "delta", "delta_ci_low", "delta_ci_high", "p", "p_holm", "survivors_only", "verdict", "seeds_needed",
]
# Beside COLUMNS in every row, not printed by `harness compare`: matched seeds for 80% power to resolve the
# *observed* difference (seeds_needed plans for min_effect), which the report shows labelled beside it.
OBSERVED = "seeds_needed_observed"
# The baseline's own rows: nothing to pair (empty counts, NaN statistics).
BASELINE_FIELDS = {
    **dict.fromkeys(COLUMNS[COLUMNS.index("n_pairs"):], math.nan),
    **dict.fromkeys(("n_pairs", "arm_diverged", "baseline_diverged", "n", "survivors_only", "seeds_needed", OBSERVED), None),
    "verdict": "baseline",
}


def _grouped(cells: Cells) -> dict[tuple, dict]:
    """(arm, lr) → {"seeds": {seed: [completed values]}, "gone": {seeds with a divergence}, "diverged": count,
    "searched": bool}."""
    grouped = defaultdict(lambda: {"seeds": defaultdict(list), "gone": set(), "diverged": 0, "searched": False})
    for arm, lr, seed, searched, status, value in cells.runs:
        cell = grouped[(arm, lr)]
        cell["searched"] |= searched
        if status == "diverged":
            cell["diverged"] += 1
            cell["gone"].add(seed)
        else:
            cell["seeds"][seed].append(float(value))
    return grouped


def _per_seed(cell: dict | None) -> dict:
    """seed → its outcome: a search's best completed trial, else the mean of its completed runs, else DIVERGED."""
    if cell is None:
        return {}
    pick = min if cell["searched"] else np.mean
    outcomes = {seed: DIVERGED for seed in cell["gone"]}
    outcomes.update({seed: float(pick(values)) for seed, values in cell["seeds"].items()})
    return outcomes


def _matched(mine: dict, theirs: dict, width: int) -> tuple[list[float], list[float]]:
    """Both sides' outcomes on the seeds both have, padded with NaN (no pair) to `width`."""
    seeds = sorted(set(mine) & set(theirs))
    pad = [math.nan] * (width - len(seeds))
    return [mine[s] for s in seeds] + pad, [theirs[s] for s in seeds] + pad


def comparison_table(cells: Cells, min_effect: float = MIN_EFFECT) -> list[dict]:
    """One row (a dict of `COLUMNS`) per (arm, lr), the baseline's first; the baseline's pair fields are NaN
    (None for the counts and seeds_needed) and its verdict 'baseline'."""
    if not min_effect > 0:
        raise AnalysisError(f"min_effect={min_effect!r} is invalid: must be a positive number (nats).")
    baseline, grouped = cells.baseline, _grouped(cells)
    order = sorted(grouped, key=lambda key: (key[0] != baseline, key[0], key[1] is None, key[1] or 0.0))
    outcomes = {key: _per_seed(grouped[key]) for key in order}
    rows = []
    for arm, lr in order:
        interval = stats.t_interval([v for v in outcomes[(arm, lr)].values() if v != DIVERGED])
        rows.append({"arm": arm, "lr": lr, "seeds": interval.n, "diverged": grouped[(arm, lr)]["diverged"],
                     "mean": interval.mean, "ci_low": interval.low, "ci_high": interval.high})
    compared = [i for i, (arm, _) in enumerate(order) if arm != baseline]
    for row in rows:
        row.update(BASELINE_FIELDS)
    if compared:
        width = max(len(outcomes[key]) for key in order)
        pairs = [_matched(outcomes[order[i]], outcomes.get((baseline, order[i][1]), {}), width) for i in compared]
        _fill(rows, compared, np.array([a for a, _ in pairs]), np.array([b for _, b in pairs]), min_effect)
    return rows


def _fill(rows: list[dict], compared: list[int], arm: np.ndarray, baseline: np.ndarray, min_effect: float) -> None:
    """The pair fields of the compared rows, tested as one table."""
    pairs = compare_pairs(arm, baseline)
    p_holm, p_stability_holm = holm_family(pairs)
    decided = verdicts(pairs, p_holm, p_stability_holm, min_effect)
    loss = pairs.loss
    needed = stats.seeds_needed_rows(loss.sd, loss.delta.n, min_effect)
    observed = _observed_needs(loss)
    for k, index in enumerate(compared):
        n = int(loss.delta.n[k])
        rows[index].update({
            "n_pairs": int(pairs.n_pairs[k]), "arm_diverged": int(pairs.arm_diverged[k]),
            "baseline_diverged": int(pairs.baseline_diverged[k]), "p_stability": float(pairs.p_stability[k]),
            "p_stability_holm": float(p_stability_holm[k]), "n": n, "delta": float(loss.delta.mean[k]),
            "delta_ci_low": float(loss.delta.low[k]), "delta_ci_high": float(loss.delta.high[k]),
            "p": float(loss.p[k]), "p_holm": float(p_holm[k]), "survivors_only": bool(pairs.survivors_only[k]),
            "verdict": str(decided[k]), "seeds_needed": None if math.isnan(needed[k]) else int(needed[k]),
            OBSERVED: None if math.isnan(observed[k]) else int(observed[k]),
        })


def _observed_needs(loss) -> np.ndarray:
    """`seeds_needed` of each row with its own observed |delta| as the effect (NaN where there is none)."""
    effect = np.abs(loss.delta.mean)
    known = np.isfinite(effect) & (effect > 0)
    needed = stats.seeds_needed_rows(np.where(known, loss.sd, np.nan), loss.delta.n, np.where(known, effect, 1.0))
    return np.where(known, needed, np.nan)
