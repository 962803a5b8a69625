"""The seed band's rule against scipy: the t-interval from three seeds, the range of two, none for one, and on a log
axis the same rule on the logarithms (a geometric mean and an interval that stays positive)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.plots.bands import seed_band


def _band(values, log=False):
    frame = pd.DataFrame({"arm": "a", "step": 0, "value": values})
    return seed_band(frame, ["arm", "step"], log=log).iloc[0]


def test_three_seeds_give_the_t_interval_of_the_mean():
    values = [3.1, 3.4, 2.9, 3.3]
    low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    band = _band(values)
    assert (band["mean"], band["low"], band["high"], band["n"]) == pytest.approx((np.mean(values), low, high, 4))


def test_two_seeds_give_their_range_and_one_seed_no_band():
    assert (_band([3.0, 3.5])["low"], _band([3.0, 3.5])["high"]) == (3.0, 3.5)
    one = _band([3.2])
    assert one["low"] == one["high"] == one["mean"] == 3.2


def test_on_a_log_axis_the_band_is_the_interval_of_the_mean_log_and_stays_positive():
    values = [10.0, 300.0, 3000.0]  # decades apart: the arithmetic interval's lower end is far below zero
    assert _band(values)["low"] < 0
    logs = np.log(values)
    low, high = stats.t.interval(0.95, 2, loc=logs.mean(), scale=stats.sem(logs))
    band = _band(values, log=True)
    assert band["mean"] == pytest.approx(stats.gmean(values))
    assert (band["low"], band["high"]) == pytest.approx((np.exp(low), np.exp(high)))
    assert 0 < band["low"] < band["mean"] < band["high"]


def test_on_a_log_axis_values_that_cannot_be_drawn_there_are_left_out():
    band = _band([0.0, -1.0, 20.0, 80.0], log=True)
    assert band["n"] == 2 and band["mean"] == pytest.approx(40.0)
    assert (band["low"], band["high"]) == pytest.approx((20.0, 80.0))


def test_seeds_that_agree_exactly_have_a_band_of_width_zero():
    band = _band([6.0, 6.0, 6.0])
    assert band["low"] == band["high"] == 6.0  # the polygon starts where the curve does, not one bucket later
