"""Does an order reverse with scale? Only when it is resolved, in opposite directions, at two scales.

Input: `loss[..., scales, variants, lrs, seeds]`, each run's ℓ (its metric, or ℓ₀ for a divergence: the LR
sensitivity's ℓ, `analysis.signals.sensitivity`), NaN where there is no run. Then:

1. each variant's best LR at each scale is the argmin over LRs of its mean ℓ (divergences counted as ℓ₀, so
   an LR where most seeds diverged cannot win through a lucky survivor);
2. at each scale, each pair of variants is compared on matched seeds at their best LRs with the paired t-test
   (`analysis.comparison.stats.paired_tests`; a seed means the same data order at any LR);
3. a pair whose mean difference has opposite signs at two scales is a candidate reversal, and its p-value is
   the larger of the two scales' p-values (an intersection–union test: a reversal is claimed only when both
   orders are resolved, so its size is at most α even when the pair truly differs at one of the scales);
4. Holm's adjustment across every candidate; a reversal is flagged where the adjusted p < α.

Vectorized over leading axes, so a simulation tests thousands of sweeps in one call.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from analysis.comparison import stats


@dataclass(frozen=True)
class Reversals:
    """Per scale and variant: best LR index and ℓ there; per scale and pair: the paired test; per pair of scales
    and pair of variants (s < t, a < b): the candidate's Holm-adjusted p (NaN when no candidate)."""

    best: np.ndarray  # [..., S, V] index into the LR axis (-1: no run)
    at_best: stats.Interval  # [..., S, V] mean ℓ at the best LR with its t-interval over seeds
    diverged: np.ndarray  # [..., S, V] seeds at the best LR counted as ℓ₀ because they diverged
    delta: np.ndarray  # [..., S, V, V] mean of variant a − variant b at their best LRs
    p: np.ndarray  # [..., S, V, V] two-sided paired t p-value
    p_reversal: np.ndarray  # [..., S, S, V, V] Holm-adjusted

    @property
    def flagged(self) -> np.ndarray:
        """[..., S, S, V, V]: the resolved reversals."""
        return self.p_reversal < stats.ALPHA


def scale_reversals(loss, diverged=None) -> Reversals:
    """`Reversals` of `loss[..., S, V, L, K]` (the module docstring's rule); `diverged`, of the same shape,
    marks the runs whose ℓ is ℓ₀ because they diverged (only counted, for the table)."""
    loss = np.asarray(loss, dtype=float)
    diverged = np.zeros(loss.shape, dtype=bool) if diverged is None else np.asarray(diverged, dtype=bool)
    with warnings.catch_warnings():  # an LR with no run has no mean: NaN, skipped below
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.nanmean(loss, axis=-1)  # [..., S, V, L]
    ran = ~np.isnan(means).all(axis=-1)
    best = np.where(ran, np.argmin(np.where(np.isnan(means), np.inf, means), axis=-1), -1)
    pick = np.maximum(best, 0)[..., None, None]
    values = np.take_along_axis(loss, pick, axis=-2)[..., 0, :]  # [..., S, V, K]
    values = np.where(ran[..., None], values, np.nan)
    gone = np.take_along_axis(diverged, pick, axis=-2)[..., 0, :] & ~np.isnan(values)
    at_best, _ = stats.t_intervals(values)
    pairs = stats.paired_tests(values[..., :, None, :] - values[..., None, :, :])  # [..., S, V, V]
    return Reversals(best, at_best, gone.sum(-1), pairs.delta.mean, pairs.p, _candidates(pairs.delta.mean, pairs.p))


def _candidates(delta: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Holm-adjusted intersection–union p of each (s < t, a < b) whose order flips; NaN elsewhere."""
    scales, variants = delta.shape[-3], delta.shape[-1]
    upper_scales = np.triu(np.ones((scales, scales), dtype=bool), 1)[:, :, None, None]
    upper_variants = np.triu(np.ones((variants, variants), dtype=bool), 1)[None, None]
    small, large = delta[..., :, None, :, :], delta[..., None, :, :, :]  # [..., S, S, V, V]
    flips = (np.sign(small) * np.sign(large) < 0) & upper_scales & upper_variants
    joint = np.where(flips, np.maximum(p[..., :, None, :, :], p[..., None, :, :, :]), np.nan)
    shape = joint.shape
    return stats.holm(joint.reshape(*shape[:-4], -1)).reshape(shape)
