"""The anytime-valid paired test (analysis/comparison/sequential.py) against independent oracles: its e-value is the
t-statistic's likelihood ratio mixed over the effect (scipy's noncentral t, integrated), mixed once more over
the prior scale it gives a published Bayes factor, its interval is where that oracle crosses 1/α, and
simulations with a known truth show what peeking after every seed costs it (nothing) and a fixed-n t-test
(a lot)."""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from analysis.comparison.sequential import ALPHA, confidence_sequence, log_e_values
from analysis.comparison.sequential_table import sequential_table
from analysis.reading.cells import MIN_EFFECT

sys.path.insert(0, str(Path(__file__).parents[1]))  # the oracle is shared with the CLI tests
from sequential_oracle import oracle_decision, oracle_e_value  # noqa: E402

REPLAYS, SEEDS = 1000, 20


@pytest.mark.parametrize("n, c2, shift", [(3, 1.0, 0.2), (8, 1.0, 0.9), (15, 0.3, -0.4), (40, 4.0, 0.1)])
def test_the_e_value_is_the_likelihood_ratio_of_the_t_statistic_mixed_over_the_effect(n, c2, shift):
    diffs = np.random.default_rng(n).normal(shift, 1.7, n)
    assert np.exp(log_e_values(diffs, null=0.05, c2=c2)[-1]) == pytest.approx(oracle_e_value(diffs, 0.05, c2), rel=1e-6)
    assert log_e_values(diffs[:1])[0] == pytest.approx(0.0, abs=1e-12)  # one pair is no evidence: G₁ = 1


def test_mixed_over_a_cauchy_scale_it_gives_the_published_jzs_bayes_factor():
    """pingouin's documented example (validated there against JASP and the BayesFactor R package): the
    two-sided JZS Bayes factor of t = 3.5 from 20 pairs with Cauchy scale r = 0.707 is 17.185 (its one-sided
    example, twice that, prints 34.369). A Cauchy(0, r) effect is N(0, g·r²) with g ~ InverseGamma(1/2, 1/2)."""
    z = np.random.default_rng(0).normal(size=20)
    diffs = (z - z.mean()) / z.std(ddof=1) + 3.5 / np.sqrt(20)  # any 20 values with t = 3.5: G depends on t and n
    assert stats.ttest_1samp(diffs, 0).statistic == pytest.approx(3.5)
    r = 0.707
    jzs = integrate.quad(lambda g: (np.exp(log_e_values(diffs, c2=1 / (g * r * r))[-1])
                                    * stats.invgamma.pdf(g, 0.5, scale=0.5)),
                         0, np.inf)[0]
    assert round(jzs, 3) == 17.185


def brute_force_interval(diffs):
    """{m : oracle G(m) < 1/α} by root finding on each side of the mean (±inf when the evidence never gets there)."""
    mean, threshold = np.mean(diffs), 1 / ALPHA
    excess = lambda m: np.log(oracle_e_value(diffs, m)) - np.log(threshold)  # noqa: E731
    far = 50 * np.std(diffs, ddof=1) + 1.0
    ends = []
    for side in (-1, 1):
        if excess(mean + side * far) < 0:
            ends.append(side * np.inf)
        else:
            ends.append(optimize.brentq(lambda r: excess(mean + side * r), 1e-12, far, xtol=1e-12) * side + mean)
    return ends


@pytest.mark.slow
def test_the_interval_is_where_the_oracle_crosses_one_over_alpha_intersected_over_seeds():
    diffs = np.random.default_rng(7).normal(-0.03, 0.02, 10)
    low, high = confidence_sequence(diffs)
    per_n = np.array([brute_force_interval(diffs[:n]) for n in range(2, len(diffs) + 1)])
    expected_low = np.maximum.accumulate(per_n[:, 0])
    expected_high = np.minimum.accumulate(per_n[:, 1])
    np.testing.assert_allclose(low[1:], expected_low, rtol=1e-6)
    np.testing.assert_allclose(high[1:], expected_high, rtol=1e-6)
    result = one_row(diffs)
    assert ((result.verdict[0], result.decided_at[0]) == oracle_decision(diffs, MIN_EFFECT)
            and result.verdict[0] == "better")
    assert (result.low[0], result.high[0]) == (pytest.approx(expected_low[-1]), pytest.approx(expected_high[-1]))


def one_row(diffs):
    """The anytime-valid table of one row whose differences from a zero baseline are `diffs` ([..., seeds])."""
    diffs = np.asarray(diffs, dtype=float)[..., None, :]
    return sequential_table(diffs, np.zeros_like(diffs), MIN_EFFECT)


def ever_decided(diffs, min_effect=MIN_EFFECT):
    """Per replay (rows of `diffs`), the decision peeking after every seed ('undecided' if none within the row)."""
    return sequential_table(diffs[:, None, :], np.zeros_like(diffs)[:, None, :], min_effect).verdict[:, 0]


def test_peeking_after_every_seed_a_null_difference_is_decided_in_at_most_5_percent_of_replays():
    diffs = np.random.default_rng(1).normal(0.0, 1.0, (REPLAYS, SEEDS))  # truth: no difference
    decided = ever_decided(diffs) != "undecided"  # a spread of 1 nat: never within ±0.01, so any decision is false
    assert decided.mean() <= 0.05
    # The reason: the fixed-n paired t-test, looked at after every seed from the second on, finds a difference
    # in far more than 5% of the same replays.
    p = np.array([stats.ttest_1samp(diffs[:, :n], 0, axis=1).pvalue for n in range(2, SEEDS + 1)])
    assert (p < ALPHA).any(axis=0).mean() > 0.15


def test_a_planted_difference_of_1_5_paired_sds_is_found_within_20_seeds_in_at_least_80_percent():
    sd = 0.02
    diffs = np.random.default_rng(2).normal(-1.5 * sd, sd, (REPLAYS, SEEDS))  # the arm is 0.03 nats better
    first = ever_decided(diffs)
    assert (first == "better").mean() >= 0.80
    assert np.isin(first, ["worse", "negligible"]).mean() <= 0.05  # wrong decisions are the coverage failures


def test_a_tiny_true_difference_is_decided_negligible_and_the_truth_stays_covered():
    diffs = np.random.default_rng(3).normal(0.001, 0.002, (REPLAYS, SEEDS))
    first = ever_decided(diffs)
    assert (first == "negligible").mean() >= 0.80 and np.isin(first, ["better", "worse"]).mean() <= 0.05
    low, high = confidence_sequence(diffs)
    assert ((low > 0.001) | (high < 0.001)).any(axis=1).mean() <= 0.05  # time-uniform coverage of the known mean


def test_few_pairs_never_decide_and_no_pairs_is_undecided():
    nothing = sequential_table(np.full((1, 3), np.nan), np.full((1, 3), np.nan), MIN_EFFECT)
    assert (nothing.verdict[0], nothing.decided_at[0], nothing.n_pairs[0]) == ("undecided", 0, 0)
    four = one_row([-1.0, -1.01, -0.99, -1.0])  # unmistakable, but 4 pairs: the line
    assert (four.verdict[0], four.decided_at[0], four.low[0], four.high[0]) == ("undecided", 0, -np.inf, np.inf)
    # The loss test shares its Holm family with the row's divergence test (p = 1 here): it rejects at α/2, which
    # unmistakable pairs reach at the sixth (the oracle's e-value, not this code's, says where).
    pairs = [-1.0, -1.01, -0.99, -1.0, -1.0, -1.01, -0.99, -1.0]
    decided = one_row(pairs)
    assert (decided.verdict[0], decided.decided_at[0]) == oracle_decision(pairs, MIN_EFFECT) == ("better", 6)
