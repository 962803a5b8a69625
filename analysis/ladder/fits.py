"""Every variant's scaling curve on one axis (training compute, or parameters), with a seed bootstrap.

**The bootstrap.** A replicate redraws, at every rung, the seeds with replacement: the same draw for every
variant, so arms that share a seed's data order and initialization stay paired (the gaps and crossovers
between them keep that pairing), and a fresh draw at each rung, since seed i of two rungs are two different
models. The curve is refitted to each replicate, starting from the full data's fit (all replicates of a variant
at once: `analysis.ladder.refit`). Two corrections for the few seeds a ladder has (docs/analysis.md shows why by
simulation, `tests/analysis/ladder_simulation.py`):

- each run enters as its rung's mean plus its deviation inflated by √(n/(n−1)), n the rung's seeds (the
  "modified residuals" of Davison & Hinkley 1997, §6.2.3): resampling n seeds otherwise shrinks the spread of
  their mean by (n−1)/n;
- the intervals are the bootstrap's percentiles widened about its median by t(df)/z, df the pooled degrees of
  freedom of the seed noise, Σ(n−1) over the variant's rungs (Hesterberg's expanded percentile interval,
  2015, with the pooled df): the bootstrap knows the seed spread only as well as those seeds show it.

A rung with one seed brings no spread of its own to the bootstrap (its point is fixed): intervals from such
ladders are narrower than the truth, and the tables say so. A replicate whose fit does not converge is left out
and counted.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

from analysis.comparison.stats import CONFIDENCE
from analysis.ladder.curve import Curve, TooFewRungs, fit_curve, predict
from analysis.ladder.points import LadderData
from analysis.ladder.refit import refit_replicates

REPLICATES = 400
BOOTSTRAP_SEED = 0  # the same replicates every time the same store is analysed


@dataclass(frozen=True)
class LadderFit:
    """Per variant its curve (None: not fitted, `notes` says why), and the curves of every bootstrap replicate:
    `boot` [B, V, 3], NaN where a replicate's fit did not converge or the variant has no curve."""

    data: LadderData
    axis: str  # 'compute' or 'params'
    curves: list[Curve | None]
    notes: list[str]
    boot: np.ndarray
    df: np.ndarray  # [V] pooled degrees of freedom of the seed noise

    def fitted(self, v: int) -> bool:
        """Whether variant v has a converged curve (only then is it drawn, extrapolated or compared)."""
        curve = self.curves[v]
        return curve is not None and curve.converged

    def curve(self, v: int) -> Curve:
        """Variant v's curve, for a variant that has one (as every `fitted` variant does)."""
        curve = self.curves[v]
        if curve is None:
            raise ValueError(f"variant {self.data.labels[v]!r} has no curve: {self.notes[v]}")
        return curve

    @property
    def refs(self) -> np.ndarray:
        """[V] each curve's reference x (NaN: no curve)."""
        return np.array([c.ref if c is not None else np.nan for c in self.curves])

    def predict(self, at: float) -> tuple[np.ndarray, np.ndarray]:
        """L̂ at `at` per variant [V] (NaN: not fitted), and per replicate [B, V]."""
        point = np.array([self.curve(v).predict(at) if self.fitted(v) else np.nan for v in range(len(self.curves))],
                         dtype=float)
        return point, predict(self.boot, self.refs, at)

    def converged_share(self) -> np.ndarray:
        """[V] share of replicates whose fit converged."""
        return (~np.isnan(self.boot[..., 0])).mean(axis=0)


def expanded_interval(samples: np.ndarray, df) -> tuple[np.ndarray, np.ndarray]:
    """The 95% percentile interval of `samples` over axis 0 (NaN ignored), widened about the median by
    t(df)/z (see the module docstring); NaN where fewer than half the replicates have a value."""
    tail = (1 - CONFIDENCE) / 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, middle, high = np.nanquantile(samples, [tail, 0.5, 1 - tail], axis=0)
        widen = scipy_stats.t.ppf(1 - tail, np.maximum(df, 1)) / scipy_stats.norm.ppf(1 - tail)
    enough = (~np.isnan(samples)).mean(axis=0) >= 0.5
    return (np.where(enough, middle - (middle - low) * widen, np.nan),
            np.where(enough, middle + (high - middle) * widen, np.nan))


def replicate_losses(loss: np.ndarray, replicates: int, rng: np.random.Generator) -> np.ndarray:
    """[B, V, R, S] bootstrap replicates of `loss` [V, R, S] (NaN: no run): at each rung, n slots per variant
    (its seeds there), each the rung's mean plus the modified deviation of a seed drawn with replacement by one
    uniform draw per (replicate, rung, slot) that every variant shares."""
    present = ~np.isnan(loss)
    n = present.sum(-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(loss, axis=-1)
        inflate = np.where(n >= 2, np.sqrt(n / np.maximum(n - 1, 1)), 0.0)
    deviations = np.nan_to_num((loss - mean[..., None]) * inflate[..., None])
    first = np.argsort(~present, axis=-1, kind="stable")  # each (v, r)'s seeds with a run first, in seed order
    deviations = np.take_along_axis(deviations, first, axis=-1)
    draws = rng.random((replicates, 1, loss.shape[1], loss.shape[2]))  # shared by the variants
    pick = np.minimum((draws * n[None, :, :, None]).astype(int), loss.shape[2] - 1)
    drawn = np.take_along_axis(np.broadcast_to(deviations, (replicates, *loss.shape)), pick, axis=-1)
    slots = np.arange(loss.shape[2]) < n[..., None]
    return np.where(slots, mean[..., None] + drawn, np.nan)


def points_of(x: np.ndarray, loss: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of one variant's runs: x [R], loss [R, S] (NaN: none)."""
    keep = ~np.isnan(loss) & ~np.isnan(x)[:, None]
    return np.broadcast_to(x[:, None], loss.shape)[keep], loss[keep]


def _curve(x: np.ndarray, loss: np.ndarray) -> tuple[Curve | None, str]:
    try:
        curve = fit_curve(*points_of(x, loss))
    except TooFewRungs as why:
        return None, f"not fitted: {why}"
    return curve, curve.note


def fit_ladder(data: LadderData, axis: str = "compute", replicates: int = REPLICATES) -> LadderFit:
    """Each variant's curve of loss against `axis` ('compute' or 'params') and its bootstrap replicates."""
    x = data.axis(axis)
    found = [_curve(x[v], data.loss[v]) for v in range(len(data.variants))]
    curves, notes = [curve for curve, _ in found], [note for _, note in found]
    boot = np.full((replicates, len(curves), 3), np.nan)
    samples = replicate_losses(data.loss, replicates, np.random.default_rng(BOOTSTRAP_SEED))
    for v, curve in enumerate(curves):
        if curve is None or not curve.converged:
            continue
        # every replicate has a value in the same slots (its rungs' seed counts): one x, a row of y each
        keep = ~np.isnan(samples[0, v]) & ~np.isnan(x[v])[:, None]
        px = np.broadcast_to(x[v][:, None], keep.shape)[keep]
        theta, converged = refit_replicates(np.log(px / curve.ref), samples[:, v][:, keep], np.asarray(curve.theta))
        boot[converged, v] = theta[converged]
    df = np.array([max(int((n - 1)[n >= 1].sum()), 1) for n in data.n_seeds])
    return LadderFit(data, axis, curves, notes, boot, df)
