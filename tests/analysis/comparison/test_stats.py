import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from analysis.comparison import stats
from oracles import holm_by_definition


def test_t_interval_is_students_and_one_value_has_none():
    values = [3.0, 3.2, 2.9, 3.1]
    interval = stats.t_interval(values)
    half = scipy_stats.t.ppf(0.975, 3) * np.std(values, ddof=1) / 2
    assert interval.mean == pytest.approx(3.05)
    assert (interval.low, interval.high) == pytest.approx((3.05 - half, 3.05 + half))
    single = stats.t_interval([3.0])
    assert single.n == 1 and single.mean == 3.0 and math.isnan(single.low) and math.isnan(single.high)


def test_holm_matches_a_hand_computation():
    # sorted: 0.01·4 = 0.04; 0.02·3 = 0.06; 0.03·2 = 0.06 (running max); 0.5·1 = 0.5; NaN is no test
    adjusted = stats.holm([0.03, 0.5, 0.01, math.nan, 0.02])
    assert adjusted[[0, 1, 2, 4]] == pytest.approx([0.06, 0.5, 0.04, 0.06])
    assert math.isnan(adjusted[3])
    assert stats.holm([0.9, 0.8]) == pytest.approx([1.0, 1.0])  # 0.8·2 capped at 1; 0.9·1 lifted to the running max


def test_holm_adjusts_each_row_of_an_array_on_its_own():
    rng = np.random.default_rng(0)
    p = rng.random((200, 7)) ** 3
    p[rng.random(p.shape) < 0.2] = math.nan
    adjusted = stats.holm(p)
    assert np.allclose(adjusted, [holm_by_definition(list(row)) for row in p], equal_nan=True, rtol=0, atol=1e-15)


def test_paired_uses_matched_differences():
    arm, base = np.array([2.9, 3.0, 3.1]), np.array([3.0, 3.12, 3.19])
    result = stats.paired(arm, base)
    assert result.delta.mean == pytest.approx(np.mean(arm - base))
    assert result.p == pytest.approx(scipy_stats.ttest_1samp(arm - base, 0).pvalue)
    assert result.sd == pytest.approx(np.std(arm - base, ddof=1))
    low, high = scipy_stats.t.interval(0.95, 2, loc=np.mean(arm - base), scale=scipy_stats.sem(arm - base))
    assert (result.delta.low, result.delta.high) == pytest.approx((low, high))


def test_zero_spread_decides_only_from_three_pairs():
    two = stats.paired([2.9, 3.0], [3.0, 3.1])  # two exactly equal differences (−0.1): no evidence of a spread
    assert math.isnan(two.p) and math.isnan(two.delta.low) and two.delta.n == 2
    three = stats.paired([2.5, 2.75, 3.0], [3.0, 3.25, 3.5])
    assert three.p == 0.0 and three.delta.low == three.delta.high == -0.5
    assert stats.paired([3.0, 3.0, 3.0], [3.0, 3.0, 3.0]).p == 1.0


def test_seeds_needed_from_a_well_known_spread_is_g_powers():
    # G*Power, paired t, two-sided α = 0.05, d = 1: 10 pairs give power 0.8031, 9 too few. With a million pairs
    # the 90% upper bound of the spread is the spread itself (to 0.1%).
    assert stats.seeds_needed(0.01, 10**6, 0.01) == 10


def test_seeds_needed_has_the_power_it_claims_by_monte_carlo():
    rng = np.random.default_rng(1)
    sd, n = 0.02, 8
    needed = stats.seeds_needed(sd, n, 0.01)
    upper = sd * math.sqrt((n - 1) / scipy_stats.chi2.ppf(0.10, n - 1))  # the 90% bound, from scipy
    for pairs, above in ((needed, True), (needed - 1, False)):
        draws = rng.normal(0.01, upper, (20_000, pairs))
        power = np.mean(scipy_stats.ttest_1samp(draws, 0.0, axis=1).pvalue < 0.05)
        assert (power > 0.8 - 0.01) if above else (power < 0.8 + 0.01)


def test_the_spread_bound_covers_the_true_spread_90_percent_of_the_time():
    rng = np.random.default_rng(2)
    for n in (2, 3, 5, 10):
        sample_sd = np.std(rng.normal(0, 1.0, (100_000, n)), axis=1, ddof=1)
        assert np.mean(stats.spread_upper_bound(sample_sd, n) >= 1.0) == pytest.approx(0.90, abs=0.005)


def test_two_pairs_rarely_say_enough_when_ten_are_needed():
    # the spread of the true differences is min_effect (d = 1: ten pairs needed, G*Power). Two pairs are
    # "enough" only when power at n = 2 reaches 0.8, i.e. a planning spread below 0.087·min_effect: the point
    # estimate of two N(0, σ) differences falls there 6.9% of the time (2Φ(0.087) − 1); its 90% bound (7.96 times
    # the estimate from two pairs) 0.9% of the time (2Φ(0.087 / 7.96) − 1).
    rng = np.random.default_rng(3)
    planned = stats.seeds_needed_rows(np.std(rng.normal(0, 0.01, (2000, 2)), axis=1, ddof=1), np.full(2000, 2), 0.01)
    assert np.mean(planned <= 2) <= 0.03 and np.mean(planned >= 10) >= 0.85


def test_seeds_needed_is_unknown_without_a_spread():
    assert stats.seeds_needed(math.nan, 5, 0.01) is None
    assert stats.seeds_needed(0.02, 1, 0.01) is None
    assert stats.seeds_needed(0.0, 2, 0.01) is None  # zero spread from two pairs: unknown, like its CI
    assert stats.seeds_needed(0.0, 3, 0.01) == 3
    assert stats.seeds_needed(10.0, 5, 0.0001) == stats.MAX_SEEDS


def _first_powered_n(sd, n, min_effect):
    """Brute force: the first number of pairs whose two-sided paired t-test at α = 0.05 reaches 80% power at the
    90% chi-square upper bound of the spread (power from scipy's noncentral t: its upper tail is all that counts),
    searched up to twice the normal approximation ((1.96 + 0.84)·σ/δ)² and then some."""
    upper = sd * math.sqrt((n - 1) / scipy_stats.chi2.ppf(0.10, n - 1))
    pairs = np.arange(2, int(2 * (2.8 * upper / min_effect) ** 2) + 50)
    power = scipy_stats.nct.sf(scipy_stats.t.ppf(0.975, pairs - 1), pairs - 1, min_effect / upper * np.sqrt(pairs))
    return int(pairs[np.argmax(power >= 0.8)])


def test_seeds_needed_of_many_rows_is_the_brute_force_answer_of_each():
    rng = np.random.default_rng(4)
    sds = np.concatenate([rng.random(60) * 0.03, [0.0008, 0.0003]])
    ns = np.concatenate([rng.integers(2, 12, 60), [3, 4]])
    assert stats.seeds_needed_rows(sds, ns, 0.01).tolist() == [_first_powered_n(sd, n, 0.01) for sd, n in zip(sds, ns)]
