import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from analysis import stats


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


def test_paired_uses_matched_differences():
    arm, base = np.array([2.9, 3.0, 3.1]), np.array([3.0, 3.12, 3.19])
    result = stats.paired(arm, base)
    assert result.delta.mean == pytest.approx(np.mean(arm - base))
    assert result.p == pytest.approx(scipy_stats.ttest_1samp(arm - base, 0).pvalue)
    assert result.sd == pytest.approx(np.std(arm - base, ddof=1))


def test_seeds_needed_is_the_fewest_with_80_percent_power():
    n = stats.seeds_needed(0.02, 0.01)
    assert stats.paired_power(n, 0.01, 0.02) >= 0.8 > stats.paired_power(n - 1, 0.01, 0.02)
    assert stats.seeds_needed(math.nan, 0.01) is None
    assert stats.seeds_needed(10.0, 0.0001) == stats.MAX_SEEDS


@pytest.mark.parametrize("diffs, expected", [
    ([-0.1, -0.11, -0.09, -0.1], "better"),
    ([0.1, 0.11, 0.09, 0.1], "worse"),
    ([0.001, -0.002, 0.002, 0.0], "negligible"),
    ([0.05, -0.04, 0.03, -0.05], "within noise"),
    ([-0.1], "no CI"),
])
def test_verdicts(diffs, expected):
    comparison = stats.paired(np.array(diffs), np.zeros(len(diffs)))
    assert stats.verdict(comparison, comparison.p, 0.01) == expected
