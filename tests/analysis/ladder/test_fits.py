"""The seed bootstrap and what is extrapolated from it, each against an independent oracle: closed forms for the
resampling, scipy's t and normal quantiles for the widening, a root finder for crossovers, and the planted truth
of simulated ladders for the intervals (tests/analysis/ladder_simulation.py, which docs/analysis.md quotes)."""

import numpy as np
import pytest
from scipy import stats as scipy_stats
from scipy.optimize import brentq

import ladder_simulation as simulation
import ladder_synthetic as synthetic
from analysis.ladder.extrapolate import crossings, extrapolate, resolve_target
from analysis.ladder.fits import expanded_interval, fit_ladder, replicate_losses


def test_modified_deviations_give_the_bootstrap_mean_the_variance_of_a_mean():
    loss = np.array([[[3.00, 3.04, 2.97, 3.03]]])
    means = np.nanmean(replicate_losses(loss, 40_000, np.random.default_rng(0)), axis=-1)[:, 0, 0]
    s2 = np.var(loss, ddof=1)
    assert means.var() == pytest.approx(s2 / 4, rel=0.03)  # plain resampling would give s²/4 · 3/4
    assert means.mean() == pytest.approx(loss.mean(), abs=1e-3)


def test_every_arm_draws_the_same_seeds_and_a_one_seed_rung_stays_put():
    base = np.array([[3.0, 3.1, 2.9], [2.5, np.nan, np.nan]])  # rung 1 has one seed
    loss = np.stack([base, base + 0.2])  # two arms, the second 0.2 worse on every seed
    drawn = replicate_losses(loss, 500, np.random.default_rng(1))
    difference = drawn[:, 1] - drawn[:, 0]
    assert np.allclose(difference[~np.isnan(difference)], 0.2)  # paired: same seeds, same deviations
    assert np.all(drawn[:, 0, 1, 0] == 2.5) and np.isnan(drawn[:, :, 1, 1:]).all()


def test_the_expanded_interval_widens_the_percentiles_about_the_median_by_t_over_z():
    samples = np.random.default_rng(2).normal(0, 1, 100_001)
    low, high = expanded_interval(samples[:, None], np.array([4]))
    widen = scipy_stats.t.ppf(0.975, 4) / scipy_stats.norm.ppf(0.975)
    q_low, median, q_high = np.quantile(samples, [0.025, 0.5, 0.975])
    assert (low[0], high[0]) == pytest.approx((median - (median - q_low) * widen, median + (q_high - median) * widen))
    assert (expanded_interval(np.full((10, 1), np.nan), np.array([4]))[0][0]
            != expanded_interval(np.ones((10, 1)), 4)[0][0])


def test_crossings_agree_with_a_root_finder():
    a, b = simulation.CURVES.values()
    theta = lambda e, big_a, alpha: np.array([np.log(e), np.log(big_a), alpha])  # noqa: E731 (ref 1: A as given)
    found = crossings(theta(*a), 1.0, theta(*b), 1.0, 1e12, 1e18)
    root = np.exp(brentq(lambda x: synthetic.planted_loss(a, np.exp(x)) - synthetic.planted_loss(b, np.exp(x)),
                         np.log(1e12), np.log(1e18)))
    assert found == pytest.approx(root, rel=1e-3)
    assert np.isnan(crossings(theta(*a), 1.0, theta(*b), 1.0, 1e12, 1e15))  # none in that range


def test_a_planted_crossover_is_found_within_its_interval():
    truth = simulation.crossover_truth(*simulation.CURVES.values())
    ladder = synthetic.chinchilla_rungs(5)
    losses = synthetic.draw_losses(np.random.default_rng(3), list(simulation.CURVES.values()), ladder, 4, 0.01)
    data = simulation.arrays(losses, ladder, list(simulation.CURVES))
    row = extrapolate(fit_ladder(data, "compute", replicates=100), resolve_target(data, "compute", None)).iloc[1]
    assert row["cross_low"] <= truth <= row["cross_high"] and row["crosses"] > 0.5
    assert abs(np.log10(row["crossover"] / truth)) < 0.5


@pytest.mark.slow
def test_intervals_cover_the_planted_truth_in_at_least_90_percent_of_seeded_replays():
    rates = simulation.coverage(replays=20, rungs=5, seeds=4, noise=0.01, replicates=100)
    quantities = {f"{q} ({arm})" for q in ("E", "A", "alpha", "predicted") for arm in simulation.CURVES}
    assert set(rates) == quantities | {"gap", "crossover"}
    assert min(rates.values()) >= 0.9, rates
