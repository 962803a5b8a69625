"""One curve L = E + A·C^-α: the planted truth comes back from noiseless points, a corrupted run barely moves the
Huber fit (it moves a least-squares one), too few rungs are refused, and a fit that runs into a bound says so."""

import numpy as np
import pytest
from scipy.optimize import curve_fit

from analysis.ladder.curve import TooFewRungs, fit_curve

TRUTH = (1.8, 400.0, 0.2)
C = np.repeat(np.geomspace(1e12, 1e16, 5), 3)


def planted(c, e=TRUTH[0], a=TRUTH[1], alpha=TRUTH[2]):
    return e + a * np.asarray(c, dtype=float) ** -alpha


def test_noiseless_points_give_back_the_planted_curve():
    curve = fit_curve(C, planted(C))
    assert curve.converged and curve.note == ""
    assert (curve.E, curve.A, curve.alpha) == pytest.approx(TRUTH, rel=1e-5)
    assert curve.predict(1e18) == pytest.approx(planted(1e18), rel=1e-6)


def test_one_corrupted_run_barely_moves_the_huber_fit():
    y = planted(C) + np.random.default_rng(0).normal(0, 0.002, C.size)
    y[-1] += 0.3  # one run at the largest rung went wrong
    huber = fit_curve(C, y).predict(1e18)
    (e, log_a, alpha), _ = curve_fit(lambda c, e, log_a, alpha: e + np.exp(log_a) * c ** -alpha, C, y,
                                     p0=(1.5, np.log(300), 0.2), maxfev=20000)  # ordinary least squares, the contrast
    least_squares = e + np.exp(log_a) * 1e18 ** -alpha
    assert abs(huber - planted(1e18)) < 0.02 < abs(least_squares - planted(1e18))


def test_fewer_rungs_than_parameters_are_refused():
    with pytest.raises(TooFewRungs, match=r"^2 rungs for 3 parameters \(E, A, α\): a curve needs at least 3 rungs$"):
        fit_curve([1e12, 1e12, 1e13, 1e13], [3.0, 3.01, 2.8, 2.81])


def test_points_no_falling_curve_describes_are_not_called_converged():
    curve = fit_curve(C, 2.0 + 0.01 * np.log(C))  # loss rising with compute: no falling curve fits it
    assert not curve.converged and curve.note.startswith("did not converge to a falling power law (α = ")
