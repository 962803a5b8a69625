"""The statistics behind every verdict: t-intervals, paired t-tests, Holm's adjustment, seeds needed.

Intervals and tests come from `scipy.stats`; only Holm's step-down rule (a sort and a running max) is
written here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

CONFIDENCE = 0.95
ALPHA = 0.05
POWER = 0.80
MAX_SEEDS = 10_000  # "seeds needed" above this is reported as this bound


@dataclass(frozen=True)
class Interval:
    """A mean and its two-sided t-interval; low/high are NaN with fewer than two values ("no CI")."""

    mean: float
    low: float
    high: float
    n: int


def t_interval(values) -> Interval:
    """Mean of `values` with its 95% Student-t interval (NaN bounds for n < 2, never a made-up interval)."""
    values = np.asarray(values, dtype=float)
    n = len(values)
    mean = float(values.mean()) if n else math.nan
    if n < 2:
        return Interval(mean, math.nan, math.nan, n)
    sem = stats.sem(values)
    if sem == 0:  # identical values: the interval is the point (scipy would give NaN)
        return Interval(mean, mean, mean, n)
    low, high = stats.t.interval(CONFIDENCE, n - 1, loc=mean, scale=sem)
    return Interval(mean, float(low), float(high), n)


@dataclass(frozen=True)
class Paired:
    """Mean difference arm − baseline over matched seeds, its t-interval and the paired t-test's p-value."""

    delta: Interval
    p: float
    sd: float  # standard deviation of the per-seed differences (NaN for n < 2)


def paired(arm, baseline) -> Paired:
    """Paired comparison of equal-length arrays matched by seed."""
    arm, baseline = np.asarray(arm, dtype=float), np.asarray(baseline, dtype=float)
    diffs = arm - baseline
    delta = t_interval(diffs)
    if delta.n < 2:
        return Paired(delta, math.nan, math.nan)
    sd = float(np.std(diffs, ddof=1))
    if sd == 0:  # every seed moved by exactly the same amount: certain, if nonzero
        return Paired(delta, 0.0 if delta.mean != 0 else 1.0, 0.0)
    return Paired(delta, float(stats.ttest_rel(arm, baseline).pvalue), sd)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (NaN entries stay NaN and do not count as tests)."""
    p = np.asarray(pvalues, dtype=float)
    adjusted = np.full_like(p, math.nan)
    tested = np.flatnonzero(~np.isnan(p))
    order = tested[np.argsort(p[tested], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted


def paired_power(n: int, effect: float, sd: float, alpha: float = ALPHA) -> float:
    """Power of a two-sided paired t-test with n pairs to detect a true mean difference `effect`."""
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    shift = effect / sd * math.sqrt(n)
    return float(stats.nct.sf(critical, df, shift) + stats.nct.cdf(-critical, df, shift))


def seeds_needed(sd: float, min_effect: float, power: float = POWER) -> int | None:
    """Fewest matched seeds for `power` to resolve a difference of `min_effect` given the paired spread `sd`.

    None when the spread is unknown (fewer than two pairs).
    """
    if math.isnan(sd):
        return None
    if sd == 0:
        return 2
    low, high = 2, 2
    while paired_power(high, min_effect, sd) < power:  # power grows with n: double, then bisect
        if high >= MAX_SEEDS:
            return MAX_SEEDS
        low, high = high, min(2 * high, MAX_SEEDS)
    while low < high:
        middle = (low + high) // 2
        if paired_power(middle, min_effect, sd) >= power:
            high = middle
        else:
            low = middle + 1
    return high


def verdict(comparison: Paired, p_holm: float, min_effect: float) -> str:
    """'no CI' (under two pairs), 'negligible' (CI inside ±min_effect), 'better'/'worse' (Holm p < α;
    lower is better), else 'within noise'."""
    delta = comparison.delta
    if delta.n < 2:
        return "no CI"
    if -min_effect < delta.low and delta.high < min_effect:
        return "negligible"
    if p_holm < ALPHA:
        return "better" if delta.mean < 0 else "worse"
    return "within noise"
