"""The statistics behind every verdict: t-intervals, paired t-tests, Holm's adjustment, seeds needed.

Distributions come from `scipy.stats`; written here are only Holm's step-down rule (a sort and a running
max) and the t-statistic's arithmetic, so that one call tests every row of a table, or every row of many
simulated sweeps, at once (arrays whose last axis holds the values; NaN = no value).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np
from scipy import stats

V = TypeVar("V", float, np.ndarray)  # a statistic of one comparison, or an array of them

CONFIDENCE = 0.95
ALPHA = 0.05
POWER = 0.80
MAX_SEEDS = 10_000  # "seeds needed" above this is reported as this bound
# Zero spread from fewer pairs than this is no evidence: two exactly equal differences would give p = 0.
ZERO_SPREAD_PAIRS = 3
# `seeds_needed` plans with this one-sided upper confidence bound of the paired spread, not the estimate.
SPREAD_CONFIDENCE = 0.90


@dataclass(frozen=True)
class Interval(Generic[V]):
    """A mean and its two-sided t-interval; low/high are NaN with fewer than two values ("no CI").

    Fields are floats (`Interval[float]`), or arrays of them from `t_intervals` (`Interval[np.ndarray]`)."""

    mean: V
    low: V
    high: V
    n: V  # a count, or an array of counts


def t_intervals(values) -> tuple[Interval[np.ndarray], np.ndarray]:
    """Per row of `values` (last axis; NaN = absent): mean, 95% Student-t interval and count, and the sample
    standard deviation (NaN under two values). Zero spread gives the point as its interval."""
    values = np.asarray(values, dtype=float)
    present = ~np.isnan(values)
    n = present.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(present, values, 0.0).sum(axis=-1) / n
        squares = np.where(present, (values - mean[..., None]) ** 2, 0.0).sum(axis=-1)
        sd = np.where(n >= 2, np.sqrt(squares / (n - 1)), np.nan)
        half = stats.t.ppf((1 + CONFIDENCE) / 2, np.maximum(n - 1, 1)) * sd / np.sqrt(n)
    return Interval(mean, mean - half, mean + half, n), sd


def t_interval(values) -> Interval[float]:
    """Mean of `values` with its 95% Student-t interval (NaN bounds for n < 2, never a made-up interval)."""
    interval, _ = t_intervals(np.asarray(values, dtype=float).reshape(-1))
    return Interval(float(interval.mean), float(interval.low), float(interval.high), int(interval.n))


@dataclass(frozen=True)
class Paired(Generic[V]):
    """Mean difference arm − baseline over matched seeds, its t-interval and the paired t-test's p-value.

    Fields are scalars from `paired`, arrays from `paired_tests`."""

    delta: Interval[V]
    p: V
    sd: V  # standard deviation of the per-seed differences (NaN for n < 2)


def paired_tests(diffs) -> Paired[np.ndarray]:
    """The paired t-test of each row of per-seed differences (last axis; NaN = no pair).

    p is NaN (and so is the interval) with fewer than two pairs, or with zero spread from fewer than
    `ZERO_SPREAD_PAIRS`; zero spread from more is certain: p = 0, or 1 when the difference is 0."""
    delta, sd = t_intervals(diffs)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = delta.mean / (sd / np.sqrt(delta.n))
        p = 2 * stats.t.sf(np.abs(t), np.maximum(delta.n - 1, 1))
    zero = sd == 0
    p = np.where(zero, np.where(delta.mean != 0, 0.0, 1.0), p)
    undecided = (delta.n < 2) | (zero & (delta.n < ZERO_SPREAD_PAIRS))
    p = np.where(undecided, np.nan, p)
    low, high = np.where(undecided, np.nan, delta.low), np.where(undecided, np.nan, delta.high)
    return Paired(Interval(delta.mean, low, high, delta.n), p, sd)


def paired(arm, baseline) -> Paired[float]:
    """Paired comparison of equal-length arrays matched by seed (the scalar form of `paired_tests`)."""
    result = paired_tests(np.asarray(arm, dtype=float) - np.asarray(baseline, dtype=float))
    delta = result.delta
    return Paired(Interval(float(delta.mean), float(delta.low), float(delta.high), int(delta.n)), float(result.p),
                  float(result.sd))


def sign_tests(diffs) -> tuple[np.ndarray, np.ndarray]:
    """The exact two-sided sign test of each row of differences (last axis; NaN = no pair, 0 = a tie, dropped):
    (p, whether negative differences outnumber positive ones). p is 1 without a non-tied pair; it equals
    `scipy.stats.binomtest(negatives, pairs).pvalue`."""
    diffs = np.asarray(diffs, dtype=float)
    negatives, positives = (diffs < 0).sum(axis=-1), (diffs > 0).sum(axis=-1)
    pairs = negatives + positives
    p = np.minimum(1.0, 2 * stats.binom.cdf(np.minimum(negatives, positives), pairs, 0.5))
    return np.where(pairs > 0, p, 1.0), negatives > positives


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values along the last axis (NaN entries stay NaN and do not count as tests)."""
    p = np.asarray(pvalues, dtype=float)
    tested = ~np.isnan(p)
    m = tested.sum(axis=-1, keepdims=True)
    order = np.argsort(np.where(tested, p, np.inf), axis=-1, kind="stable")  # untested last: they never lift a max
    ranked = np.take_along_axis(p, order, axis=-1)
    scaled = np.minimum(1.0, (m - np.arange(p.shape[-1])) * np.nan_to_num(ranked, nan=0.0))
    adjusted = np.empty_like(p)
    np.put_along_axis(adjusted, order, np.maximum.accumulate(scaled, axis=-1), axis=-1)
    return np.where(tested, adjusted, np.nan)


def paired_powers(n, effect: float, sd, alpha: float = ALPHA):
    """Power of a two-sided paired t-test with n pairs to detect a true mean difference `effect` (elementwise)."""
    df = np.asarray(n) - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    shift = effect / np.asarray(sd) * np.sqrt(n)
    # The far tail (below −critical) underflows to NaN in scipy's nct for shifts ≥ 8, where it is < 1e-16.
    return stats.nct.sf(critical, df, shift) + np.nan_to_num(stats.nct.cdf(-critical, df, shift), nan=0.0)


def spread_upper_bound(sd, n, confidence: float = SPREAD_CONFIDENCE):
    """One-sided upper confidence bound of the true standard deviation from a sample sd of n normal values
    (chi-square: (n − 1)·sd²/σ² ~ χ²(n − 1)); elementwise on arrays."""
    return sd * np.sqrt((n - 1) / stats.chi2.ppf(1 - confidence, n - 1))


def seeds_needed(sd: float, n: int, min_effect: float, power: float = POWER) -> int | None:
    """Fewest matched seeds for `power` to resolve a difference of `min_effect`, planned with the 90% upper
    confidence bound of the spread `sd` seen in `n` pairs, so that it errs toward more seeds.

    None when the spread is unknown (fewer than two pairs, or zero spread from fewer than three)."""
    needed = seeds_needed_rows([sd], [n], min_effect, power)[0]
    return None if math.isnan(needed) else int(needed)


def seeds_needed_rows(sd, n, min_effect, power: float = POWER) -> np.ndarray:
    """`seeds_needed` of each (sd, n), as floats (NaN: unknown); one power computation per step for all rows.
    `min_effect` is one number, or one per row."""
    sd, n = np.asarray(sd, dtype=float), np.asarray(n, dtype=int)
    unknown = (n < 2) | np.isnan(sd) | ((sd == 0) & (n < ZERO_SPREAD_PAIRS))
    with np.errstate(invalid="ignore", divide="ignore"):
        upper = np.where(unknown, np.nan, spread_upper_bound(sd, np.maximum(n, 2)))
    todo = ~unknown & (upper > 0)
    planned = np.where(todo, upper, 1.0)  # rows not planned here get a harmless spread

    def enough(seeds):
        return paired_powers(seeds, min_effect, planned) >= power

    low, high = np.full(sd.shape, 2), np.full(sd.shape, 2)
    while True:  # power grows with n: double, then bisect
        short = todo & ~enough(high) & (high < MAX_SEEDS)
        if not short.any():
            break
        low, high = np.where(short, high, low), np.where(short, np.minimum(2 * high, MAX_SEEDS), high)
    capped = todo & ~enough(high)
    searching = todo & ~capped
    while (searching & (low < high)).any():
        middle = (low + high) // 2
        ok = enough(middle)
        active = searching & (low < high)
        high, low = np.where(active & ok, middle, high), np.where(active & ~ok, middle + 1, low)
    needed = np.where(capped, MAX_SEEDS, high).astype(float)
    # no spread: the fewest pairs whose zero spread decides
    needed = np.where(~unknown & (upper == 0), ZERO_SPREAD_PAIRS, needed)
    return np.where(unknown, np.nan, needed)
