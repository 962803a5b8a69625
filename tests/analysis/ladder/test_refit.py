"""The bootstrap's batched refits against scipy's `least_squares`, called here directly with the fit's Huber loss,
one replicate at a time (the oracle, and the solver the refits replaced): the same cost function, the same or a
lower optimum in every replicate, the same convergence verdict wherever scipy's own tests stopped it, and the
same bootstrap intervals."""

import numpy as np
import pytest
from scipy.optimize import least_squares

import ladder_simulation as simulation
import ladder_synthetic as synthetic
from analysis.ladder.curve import ALPHA_RANGE, HUBER_DELTA, fit_curve
from analysis.ladder.fits import expanded_interval, replicate_losses
from analysis.ladder.refit import huber_cost, refit_replicates


def _log_fit(theta, x):
    return np.logaddexp(theta[0], theta[1] - theta[2] * x)


def _scipy(x, y, start):
    """scipy's fit of one replicate: its optimum, its cost there, and whether it converged (a tolerance met, α in
    range)."""
    found = least_squares(lambda theta: _log_fit(theta, x) - np.log(y), start, loss="huber", f_scale=HUBER_DELTA)
    return found.x, found.cost, found.status > 0 and ALPHA_RANGE[0] < found.x[2] < ALPHA_RANGE[1]


@pytest.fixture(scope="module", params=[(5, 4, 0.01, 3), (4, 2, 0.02, 2), (5, 3, 0.005, 1)],
                ids=["5 rungs × 4 seeds", "4 × 2, noisy", "5 × 3, quiet"])
def replicates(request):
    """Per variant of a planted two-arm ladder: (x, y [B, P], the full data's θ) as `fit_ladder` refits them, and
    scipy's fit of each replicate."""
    rungs, seeds, noise, rng_seed = request.param
    ladder = synthetic.chinchilla_rungs(rungs)
    losses = synthetic.draw_losses(np.random.default_rng(rng_seed), list(simulation.CURVES.values()), ladder, seeds,
                                   noise)
    data = simulation.arrays(losses, ladder, list(simulation.CURVES))
    compute = data.axis("compute")
    samples = replicate_losses(data.loss, 100, np.random.default_rng(0))
    found = []
    for v in range(len(data.variants)):
        c = np.repeat(compute[v], seeds)
        curve = fit_curve(c, data.loss[v].ravel())
        assert curve.converged
        x, y, start = np.log(c / curve.ref), samples[:, v].reshape(len(samples), -1), np.asarray(curve.theta)
        found.append((x, y, start, [_scipy(x, row, start) for row in y]))
    return found


def test_the_cost_is_scipys_huber_cost():
    rng = np.random.default_rng(4)
    x, y = np.linspace(-2, 2, 12), 2 + np.exp(-0.3 * np.linspace(-2, 2, 12)) + rng.normal(0, 0.01, 12)
    found = least_squares(lambda theta: _log_fit(theta, x) - np.log(y), [0.5, 0.0, 0.2], loss="huber",
                          f_scale=HUBER_DELTA)
    assert huber_cost(_log_fit(found.x, x) - np.log(y)) == pytest.approx(found.cost, rel=1e-12)


def test_every_replicate_reaches_scipys_optimum_or_a_lower_one(replicates):
    for x, y, start, scipy_fits in replicates:
        theta, converged = refit_replicates(x, y, start)
        for b, (expected, cost, scipy_converged) in enumerate(scipy_fits):
            ours = huber_cost(_log_fit(theta[b], x) - np.log(y[b]))
            assert ours <= cost * (1 + 1e-7), (b, theta[b], expected)
            if scipy_converged:
                assert converged[b], (b, theta[b], expected)


def test_the_bootstrap_intervals_are_scipys(replicates):
    for x, y, start, scipy_fits in replicates:
        theta, converged = refit_replicates(x, y, start)
        at = x.max() + np.log(100.0)  # 100× the largest rung's compute: where the intervals are used
        ours = np.where(converged, np.exp(_log_fit(theta.T, at)), np.nan)
        theirs = np.array([np.exp(_log_fit(t, at)) if ok else np.nan for t, _, ok in scipy_fits])
        low, high = expanded_interval(ours[:, None], np.array([6]))
        expected_low, expected_high = expanded_interval(theirs[:, None], np.array([6]))
        width = expected_high[0] - expected_low[0]
        assert abs(low[0] - expected_low[0]) < 0.02 * width and abs(high[0] - expected_high[0]) < 0.02 * width
