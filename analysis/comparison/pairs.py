"""An arm against its baseline on matched seeds: both outcomes, divergence as much as loss.

Each side is an array [..., seeds] of per-seed outcomes: a finite loss for a completed run, `DIVERGED`
(+inf, worse than any loss) for a diverged one, NaN where that side has no result for the seed. A seed is
*matched* when both sides have a result. On the matched seeds:

- divergence: how many each side diverged on, and Fisher's exact test of the two divergence rates (two-sided,
  `scipy.stats.fisher_exact` on the 2×2 table diverged/completed × arm/baseline), where some matched seed
  diverged on one side only (else there is nothing to test: NaN);
- loss: the paired t-test on the seeds both completed (`analysis.comparison.stats.paired_tests`), which is conditional
  on survival whenever some matched seed diverged;
- the discordant divergences of each side (`arm_only`, `baseline_only`): what the rule table
  (`analysis.comparison.rules`) charges against a loss claim in that side's favour.

Why Fisher and not McNemar's exact test on the discordant pairs: McNemar needs six discordant pairs of six to
reach p < 0.05 two-sided, so a stable arm against a baseline that diverged on 5 of 6 seeds could never be
told apart; Fisher's test ignores the pairing, which is conservative when divergences of one seed are
positively correlated across arms (same initialization and data order), as docs/analysis.md shows by
simulation. Arrays of rows (and of simulated sweeps) are tested in one call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats as scipy_stats

from analysis.comparison import stats

DIVERGED = math.inf


@dataclass(frozen=True)
class Pairs:
    """Per row: matched seeds, divergences of each side on them, their test, and the loss test on survivors."""

    n_pairs: np.ndarray
    arm_diverged: np.ndarray
    baseline_diverged: np.ndarray
    arm_only: np.ndarray  # matched seeds where the arm diverged and the baseline completed
    baseline_only: np.ndarray  # matched seeds where the baseline diverged and the arm completed
    p_stability: np.ndarray  # Fisher's exact test; NaN where no matched seed diverged on one side only
    loss: stats.Paired  # over the matched seeds both completed; its delta.n is the `n` of the table
    loss_diffs: np.ndarray  # [..., seeds] arm − baseline on the seeds both completed, NaN elsewhere

    @property
    def survivors_only(self) -> np.ndarray:
        """Rows whose loss test left out a matched seed because it diverged (a loss verdict given survival)."""
        return (self.arm_diverged > 0) | (self.baseline_diverged > 0)


@lru_cache(maxsize=None)  # few distinct tables: seeds are few
def fisher(arm_diverged: int, baseline_diverged: int, n_pairs: int) -> float:
    """Two-sided Fisher exact p of arm_diverged/n_pairs against baseline_diverged/n_pairs."""
    table = [[arm_diverged, n_pairs - arm_diverged], [baseline_diverged, n_pairs - baseline_diverged]]
    return float(scipy_stats.fisher_exact(table).pvalue)


def compare_pairs(arm, baseline) -> Pairs:
    """`Pairs` of every row of the equally shaped arrays `arm` and `baseline` (see the module docstring)."""
    arm, baseline = np.asarray(arm, dtype=float), np.asarray(baseline, dtype=float)
    matched = ~np.isnan(arm) & ~np.isnan(baseline)
    arm_gone, baseline_gone = matched & np.isinf(arm), matched & np.isinf(baseline)
    n_pairs, arm_diverged, baseline_diverged = matched.sum(-1), arm_gone.sum(-1), baseline_gone.sum(-1)
    discordant = (arm_gone != baseline_gone).any(axis=-1)
    tested = (np.vectorize(fisher, otypes=[float])(arm_diverged, baseline_diverged, n_pairs) if discordant.any()
              else np.nan)
    p_stability = np.where(discordant, tested, np.nan)
    survived = matched & ~arm_gone & ~baseline_gone
    with np.errstate(invalid="ignore"):
        diffs = np.where(survived, arm - baseline, np.nan)
    arm_only, baseline_only = (arm_gone & ~baseline_gone).sum(-1), (baseline_gone & ~arm_gone).sum(-1)
    return Pairs(n_pairs, arm_diverged, baseline_diverged, arm_only, baseline_only, p_stability,
                 stats.paired_tests(diffs), diffs)
