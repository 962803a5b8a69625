"""How sure a rung's decision accuracy is, given its seeds: a parametric bootstrap of each decision's true order.

What the interval is about: the share of the reference's decisions whose **true** order at the rung, the order
infinitely many seeds would show, agrees with the reference's. A rung's pick is that order's estimate from a few
seeds; a decision whose difference there is small against its seeds' spread may be picked either way.

A replicate redraws each decision's mean difference at the rung from the studentized pivot of its comparison
row (`comparison_table`'s own numbers): delta + se · T, T a Student t with n − 1 degrees of freedom, n the pairs
both completed and se the row's standard error (its 95% interval's half-width over t₀.₉₇₅(n − 1)). Its sign is
the replicate's order; a row with no interval (fewer than two completed pairs) is a coin toss. The reference's
orders are held fixed: they are what is being predicted. The interval is the 2.5–97.5% percentiles of the
replicates' share of agreements, each taken outward to a share some replicate had (shares are k of n).

Why not the plain seed bootstrap (redraw the seeds, recompute the picks): with three seeds it has ten distinct
redraws, and a small difference whose three seeds happen to agree in sign is picked the same way in nearly all
of them, so a borderline decision looks certain: a prototype covered the planted accuracy of simulated benchmarks
(then the mean chance that a rung's three-seed pick agrees) in only 55–73% of replays per rung; this interval
covers its planted accuracy in all of 200 (docs/decisions.md, tests/analysis/decisions_simulation.py).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as scipy_stats

from analysis.comparison.row import ComparisonRow
from analysis.comparison.stats import CONFIDENCE

REPLICATES = 2000
BOOTSTRAP_SEED = 0  # the same store gives the same intervals


def order_draws(rows: list[ComparisonRow], replicates: int, rng: np.random.Generator) -> np.ndarray:
    """[B, D] each decision's order (−1 the second variant ahead, +1 the first) in each replicate. A row whose
    order is set by discordant divergences (one side diverged on seeds where the other completed: ranked behind,
    as the row's `direction` says) keeps that order in every replicate; the rest draw their loss difference."""
    draws = np.empty((replicates, len(rows)), dtype=int)
    for k, row in enumerate(rows):
        n, delta, low, high = row["n"] or 0, row["delta"], row["delta_ci_low"], row["delta_ci_high"]
        if (row.get("arm_only") or 0) != (row.get("baseline_only") or 0):
            draws[:, k] = row["direction"]
        elif n >= 2 and all(math.isfinite(v) for v in (delta, low, high)):
            se = (high - low) / (2 * scipy_stats.t.ppf(0.5 + CONFIDENCE / 2, n - 1))
            means = delta + se * rng.standard_t(n - 1, replicates)
            draws[:, k] = np.sign(means)
        else:
            draws[:, k] = rng.choice((-1, 1), replicates)
    return draws


def accuracy_interval(rows: list[ComparisonRow], orders: list[int], replicates: int = REPLICATES,
                      rng: np.random.Generator | None = None) -> tuple[float, float]:
    """The 95% interval of the share of decisions (their comparison rows at one rung) whose true order agrees with
    the reference's `orders` (±1)."""
    rng = rng if rng is not None else np.random.default_rng(BOOTSTRAP_SEED)
    agree = (order_draws(rows, replicates, rng) == np.asarray(orders)).mean(axis=1)
    # The shares are discrete (k of n decisions): each bound is a share some replicate had, the outer one.
    low = np.quantile(agree, (1 - CONFIDENCE) / 2, method="lower")
    high = np.quantile(agree, (1 + CONFIDENCE) / 2, method="higher")
    return float(low), float(high)
