"""The fixed-n verdict of each arm against its baseline, from its `analysis.comparison.pairs.Pairs`: the evidence its
tests give, judged by the one rule table (`analysis.comparison.rules.RULES`, whose docstring states the outcome model).

Every test in a table is one Holm family: each row's loss test and, where it has one, its divergence test
(Fisher's exact test of the two divergence rates on the matched seeds). The loss test is the paired t-test on
the seeds both completed; with `robust`, a row's loss p is the larger of the t-test's and the exact sign test's
(scipy's `binomtest` on the wins and losses), so a loss claim needs the mean *and* most seeds on its side.
"""

from __future__ import annotations

import numpy as np

from analysis.comparison.pairs import Pairs
from analysis.comparison.rules import Evidence, decide
from analysis.comparison.stats import ALPHA, holm, sign_tests


def loss_p(pairs: Pairs, robust: bool = False) -> np.ndarray:
    """Each row's loss p: the paired t-test's, or with `robust` the larger of it and the sign test's (1 where the
    two point different ways)."""
    if not robust:
        return pairs.loss.p
    sign_p, wins_more = sign_tests(pairs.loss_diffs)
    agree = (pairs.loss.delta.mean < 0) == wins_more
    with np.errstate(invalid="ignore"):
        return np.where(np.isnan(pairs.loss.p), np.nan, np.where(agree, np.fmax(pairs.loss.p, sign_p), 1.0))


def holm_family(pairs: Pairs, robust: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Holm-adjusted (loss p, divergence p) of every row: one family over the rows (the last axis)."""
    p = loss_p(pairs, robust)
    rows = p.shape[-1]
    adjusted = holm(np.concatenate([p, pairs.p_stability], axis=-1))
    return adjusted[..., :rows], adjusted[..., rows:]


def fixed_evidence(pairs: Pairs, p_holm: np.ndarray, p_stability_holm: np.ndarray, min_effect: float) -> Evidence:
    """What the fixed-n tests say about each row, for `analysis.comparison.rules.decide`."""
    delta = pairs.loss.delta
    with np.errstate(invalid="ignore"):
        direction = np.where(np.isnan(delta.mean), 0, np.sign(delta.mean))
        inside = (-min_effect < delta.low) & (delta.high < min_effect)
    return Evidence(p_stability_holm < ALPHA, p_holm < ALPHA, np.isnan(pairs.loss.p), inside, direction,
                    pairs.arm_only, pairs.baseline_only)


def verdicts(pairs: Pairs, p_holm: np.ndarray, p_stability_holm: np.ndarray, min_effect: float) -> np.ndarray:
    """The verdict of each row, as an array of strings (`analysis.comparison.rules.Verdict` values)."""
    return decide(fixed_evidence(pairs, p_holm, p_stability_holm, min_effect), "fixed")
