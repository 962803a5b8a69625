"""Anytime-valid inference for a paired comparison: e-processes and a confidence sequence that may be looked at
after every seed, and stopped on, without inflating false findings.

A fixed-n t-test looked at after every seed rejects a true null far more often than α (each look is another
chance). **The loss** uses the scale-invariant t-test martingale of Wang & Ramdas (2024, "Anytime-valid t-tests
and confidence sequences for Gaussian means with unknown variance", Thm 4.9; Lai 1976 is its flat-prior
ancestor): for the per-seed differences d₁…dₙ ~ N(μ, σ²), σ unknown, and a candidate mean m,

    Gₙ(m) = √(c² / (n + c²)) · ((n + c²)·Vₙ / ((n + c²)·Vₙ − Sₙ²))^(n/2),   Sₙ = Σ(dᵢ − m), Vₙ = Σ(dᵢ − m)²,

the likelihood ratio of the t-statistic mixed over the standardized effect θ = (μ − m)/σ ~ N(0, 1/c²). Under
μ = m it is a nonnegative martingale with G₁ = 1, so by Ville's inequality P(Gₙ(m) ≥ 1/α for some n) ≤ α.
The confidence sequence is {m : Gₙ(m) < 1/α}, an interval around the mean solved in closed form below;
intersecting it over n (the running max of the lower and min of the upper bounds) keeps it valid. c² = 1 (the
prior carries one observation's information); at α = 0.05 the sequence is the whole line up to four pairs.

**Counts** (a side's discordant divergences, or the signs of the differences under `--robust`) use the sign
e-process: among k + l discordant events, k of one kind, e = 2^(k+l) · B(k + 1, l + 1), the likelihood ratio of
"each event is of the first kind with probability q" mixed over q ~ Uniform(0, 1) against q = ½, a martingale
under q = ½ (Robbins' mixture; the beta-binomial Bayes factor).

An anytime-valid p-value is 1 / (the running maximum of an e-process), capped at 1: P(it ever falls to x) ≤ x.
Every function takes running sums or indicator arrays along the last axis (seeds in order) with any leading
shape, so one call serves a table's rows or many simulated sweeps. Numpy and scipy.special only.
"""

from __future__ import annotations

import numpy as np
from scipy import special

ALPHA = 0.05
PRIOR_PRECISION = 1.0  # c²: θ ~ N(0, 1/c²)


def running_sums(diffs, present=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, S, V): after each position of the last axis, the count, sum and sum of squares of the differences
    present so far (`present`: a mask; default every finite value)."""
    d = np.asarray(diffs, dtype=float)
    present = np.isfinite(d) if present is None else np.asarray(present, dtype=bool)
    kept = np.where(present, d, 0.0)
    return np.cumsum(present, axis=-1), np.cumsum(kept, axis=-1), np.cumsum(kept * kept, axis=-1)


def log_e_from_sums(n, s, v, c2: float = PRIOR_PRECISION) -> np.ndarray:
    """log Gₙ(0) from the running sums of the differences minus the null (0 where n = 0: no evidence)."""
    n, s, v = (np.asarray(x, dtype=float) for x in (n, s, v))
    with np.errstate(divide="ignore", invalid="ignore"):  # all pairs equal to the null: 0/0, no evidence
        ratio = np.where(v > 0, (n + c2) * v / ((n + c2) * v - s * s), 1.0)
        log_e = 0.5 * np.log(c2 / (n + c2)) + 0.5 * n * np.log(ratio)
    return np.where(n > 0, log_e, 0.0)


def log_e_values(diffs, null: float = 0.0, c2: float = PRIOR_PRECISION) -> np.ndarray:
    """log Gₙ(null) for n = 1…N along the last axis of `diffs`: the evidence against "the mean difference is
    `null`" after each pair."""
    return log_e_from_sums(*running_sums(np.asarray(diffs, dtype=float) - null), c2=c2)


def interval_from_sums(n, s, v, alpha: float = ALPHA, c2: float = PRIOR_PRECISION) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) after each position: the running intersection of {m : Gₙ(m) < 1/α}, ±inf while it is the
    whole line (no pair yet, or n ≤ a below).

    Solving Gₙ(m) < 1/α for m = mean − δ gives δ² < a·Q / (n·(n − a)) with Q the sum of squared deviations
    from the mean and a = (1 − (α²c²/(n + c²))^(1/n))·(n + c²); for n ≤ a every m qualifies."""
    n, s, v = (np.asarray(x, dtype=float) for x in (n, s, v))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(n > 0, s / n, 0.0)
        q = np.maximum(v - s * mean, 0.0)  # rounding can leave a tiny negative
        a = -np.expm1(np.log(alpha**2 * c2 / (n + c2)) / n) * (n + c2)
        radius = np.where((n > 0) & (n > a), np.sqrt(a * q / (n * (n - a))), np.inf)
    return np.maximum.accumulate(mean - radius, axis=-1), np.minimum.accumulate(mean + radius, axis=-1)


def confidence_sequence(diffs, alpha: float = ALPHA, c2: float = PRIOR_PRECISION) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) after each pair along the last axis of `diffs` (every value a pair)."""
    return interval_from_sums(*running_sums(diffs), alpha=alpha, c2=c2)


def log_sign_e(first, second) -> np.ndarray:
    """log e of the sign e-process after each position, from indicator arrays of the two kinds of event."""
    k = np.cumsum(np.asarray(first, dtype=float), axis=-1)
    l = np.cumsum(np.asarray(second, dtype=float), axis=-1)  # noqa: E741
    return (k + l) * np.log(2.0) + special.betaln(k + 1, l + 1)


def anytime_p(log_e) -> np.ndarray:
    """The anytime-valid p-value after each position: 1 / the running maximum of the e-process, capped at 1."""
    return np.minimum(1.0, np.exp(-np.maximum.accumulate(np.asarray(log_e, dtype=float), axis=-1)))
