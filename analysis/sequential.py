"""Anytime-valid inference for the paired difference arm − baseline: a confidence sequence that may be looked
at after every seed, and stopped on, without inflating false findings.

A fixed-n t-test looked at after every seed rejects a true null far more often than α (each look is another
chance). The rule here is the scale-invariant t-test martingale of Wang & Ramdas (2024, "Anytime-valid t-tests
and confidence sequences for Gaussian means with unknown variance", Thm 4.9; Lai 1976 is its flat-prior
ancestor): for the per-seed differences d₁…dₙ ~ N(μ, σ²), σ unknown, and a candidate mean m,

    Gₙ(m) = √(c² / (n + c²)) · ((n + c²)·Vₙ / ((n + c²)·Vₙ − Sₙ²))^(n/2),   Sₙ = Σ(dᵢ − m), Vₙ = Σ(dᵢ − m)²,

the likelihood ratio of the t-statistic mixed over the standardized effect θ = (μ − m)/σ ~ N(0, 1/c²). Under
μ = m it is a nonnegative martingale with G₁ = 1, so by Ville's inequality P(Gₙ(m) ≥ 1/α for some n) ≤ α.
The confidence sequence is {m : Gₙ(m) < 1/α}, an interval around the mean solved in closed form below;
intersecting it over n (the running max of the lower and min of the upper bounds) keeps it valid.

c² = 1 (the prior carries one observation's information). With α = 0.05 the sequence is the whole line up to
four pairs, so the earliest decision is at five matched seeds. Numpy only, no scipy: `harness sweep
--until-decided` calls this between rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

ALPHA = 0.05
PRIOR_PRECISION = 1.0  # c²: θ ~ N(0, 1/c²)
UNDECIDED = "undecided"


def log_e_values(diffs, null: float = 0.0, c2: float = PRIOR_PRECISION) -> np.ndarray:
    """log Gₙ(null) for n = 1…N along the last axis of `diffs` (any leading shape): the evidence against
    "the mean difference is `null`" after each pair."""
    d = np.asarray(diffs, dtype=float) - null
    n = np.arange(1, d.shape[-1] + 1)
    s, v = np.cumsum(d, axis=-1), np.cumsum(d * d, axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):  # all pairs equal to `null`: 0/0, no evidence
        ratio = np.where(v > 0, (n + c2) * v / ((n + c2) * v - s * s), 1.0)
    return 0.5 * np.log(c2 / (n + c2)) + 0.5 * n * np.log(ratio)


def confidence_sequence(diffs, alpha: float = ALPHA, c2: float = PRIOR_PRECISION) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) after each pair along the last axis: the running intersection of {m : Gₙ(m) < 1/α}.

    Solving Gₙ(m) < 1/α for m = mean − δ gives δ² < a·Q / (n·(n − a)) with Q the sum of squared deviations
    from the mean and a = (1 − (α²c²/(n + c²))^(1/n))·(n + c²); for n ≤ a every m qualifies (±inf)."""
    d = np.asarray(diffs, dtype=float)
    n = np.arange(1, d.shape[-1] + 1)
    s, v = np.cumsum(d, axis=-1), np.cumsum(d * d, axis=-1)
    mean = s / n
    q = np.maximum(v - s * mean, 0.0)  # rounding can leave a tiny negative
    a = -np.expm1(np.log(alpha**2 * c2 / (n + c2)) / n) * (n + c2)
    with np.errstate(divide="ignore", invalid="ignore"):
        radius = np.where(n > a, np.sqrt(a * q / (n * (n - a))), np.inf)
    return np.maximum.accumulate(mean - radius, axis=-1), np.minimum.accumulate(mean + radius, axis=-1)


def verdicts(low, high, min_effect: float) -> np.ndarray:
    """The decision each interval states, in the fixed-n verdict's order: 'negligible' first (inside
    ±min_effect: real or not, too small to matter), then the sign ('better': lower loss), else 'undecided'."""
    low, high = np.asarray(low), np.asarray(high)
    return np.select([(low > -min_effect) & (high < min_effect), high < 0, low > 0],
                     ["negligible", "better", "worse"], UNDECIDED)


@dataclass(frozen=True)
class Sequential:
    """The sequence over every pair: its interval at the last pair, the first decision and where it came."""

    n: int
    low: float
    high: float
    verdict: str  # 'negligible', 'better', 'worse' or 'undecided'
    decided_at: int | None  # pairs, in seed order, at the first decision


def sequential_test(diffs, min_effect: float, alpha: float = ALPHA) -> Sequential:
    """The anytime-valid test of per-seed differences given in seed order."""
    diffs = np.asarray(diffs, dtype=float)
    if not len(diffs):
        return Sequential(0, -math.inf, math.inf, UNDECIDED, None)
    low, high = confidence_sequence(diffs, alpha)
    stated = verdicts(low, high, min_effect)
    hits = np.flatnonzero(stated != UNDECIDED)
    first = int(hits[0]) if len(hits) else None
    return Sequential(len(diffs), float(low[-1]), float(high[-1]), UNDECIDED if first is None else str(stated[first]),
                      None if first is None else first + 1)
