"""The verdict rules on simulated sweeps with a known truth (tests/analysis/simulations.py), vectorized."""

import numpy as np
from scipy import stats as scipy_stats

import simulations
from analysis.pairs import DIVERGED, compare_pairs

SWEEPS = 2000


def test_the_survivorship_null_is_rarely_better():
    # same loss distribution, diverging exactly where it would have ended > 0.005 worse; the old rule said
    # `better` in ~37% of these sweeps at run noise 0.01
    rng = np.random.default_rng(0)
    for noise in (0.003, 0.01, 0.03):
        arm, baseline = simulations.survivorship_null(rng, SWEEPS, noise=noise)
        assert np.mean(simulations.decide(arm, baseline) == "better") <= 0.05
    # the scenario bites: the rule that ignored divergences (written with scipy alone) fell for it
    assert np.mean(simulations.old_rule_better(arm, baseline)) > 0.3


def test_an_arm_that_diverged_on_4_of_6_is_never_negligible_or_better():
    rng = np.random.default_rng(1)
    for effect, noise in ((-0.1, 0.003), (-0.1, 0.0), (0.0, 0.0), (0.0, 0.0005), (0.0, 0.003)):
        arm, baseline = simulations.diverged_on(rng, SWEEPS, 4, effect=effect, noise=noise)
        found = set(simulations.decide(arm, baseline))
        assert not found & {"negligible", "better"}, (effect, noise, found)


def test_a_stable_arm_against_a_baseline_that_diverged_on_5_of_6_is_more_stable():
    rng = np.random.default_rng(2)
    baseline, arm = simulations.diverged_on(rng, SWEEPS, 5)
    assert scipy_stats.fisher_exact([[0, 6], [5, 1]]).pvalue < 0.05  # the oracle: resolved on its own (one arm, one test)
    assert set(simulations.decide(arm, baseline)) == {"more stable"}


def test_equal_stability_is_rarely_called_more_or_less_stable_even_with_correlated_seeds():
    rng = np.random.default_rng(3)
    for correlation in (0.0, 0.5, 0.9):
        arm_gone, baseline_gone = simulations.correlated_divergences(rng, SWEEPS, 10, 0.3, correlation)
        arm, baseline = np.where(arm_gone, DIVERGED, 3.0), np.where(baseline_gone, DIVERGED, 3.0)
        verdicts = simulations.decide(arm, baseline)
        assert np.mean(np.isin(verdicts, ["more stable", "less stable"])) <= 0.05


def test_the_divergence_test_is_fishers_and_the_loss_test_ttest_rel_on_survivors():
    rng = np.random.default_rng(4)
    arm, baseline = simulations.survivorship_null(rng, 50, noise=0.01)
    pairs = compare_pairs(arm, baseline)
    for k in range(50):
        gone = int(np.isinf(arm[k]).sum())
        fisher = scipy_stats.fisher_exact([[gone, 10 - gone], [0, 10]]).pvalue if gone else np.nan
        assert np.allclose(pairs.p_stability[k], fisher, equal_nan=True)
        kept = np.isfinite(arm[k])
        expected = scipy_stats.ttest_rel(arm[k][kept], baseline[k][kept]).pvalue if kept.sum() >= 2 else np.nan
        assert np.allclose(pairs.loss.p[k], expected, rtol=1e-9, equal_nan=True)
        assert pairs.loss.delta.n[k] == kept.sum() and pairs.n_pairs[k] == 10 and pairs.arm_diverged[k] == gone


def test_identical_variants_at_two_widths_are_rarely_flagged_as_reversing():
    rng = np.random.default_rng(5)
    for penalty in ((0.0, 0.0, 0.0), (0.03, 0.0, 0.03)):
        assert simulations.flagged(simulations.two_widths(rng, SWEEPS, 0.0, lr_penalty=penalty)).mean() <= 0.05


def test_a_planted_reversal_is_flagged_in_at_least_90_percent_of_sweeps():
    rng = np.random.default_rng(6)
    for penalty in ((0.0, 0.0, 0.0), (0.03, 0.0, 0.03)):
        assert simulations.flagged(simulations.two_widths(rng, SWEEPS, 0.05, lr_penalty=penalty)).mean() >= 0.90


def test_a_difference_at_one_width_only_is_no_reversal():
    # the intersection–union test's least favourable null: resolved at one width, nothing at the other
    rng = np.random.default_rng(7)
    assert simulations.flagged(simulations.two_widths(rng, SWEEPS, 0.05, shift_at_second=0.0)).mean() <= 0.05
