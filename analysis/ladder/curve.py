"""One scaling curve, L(C) = E + A·C^-α, fitted to (C, L) points with a Huber loss in log space.

The fit follows Hoffmann et al. (2022, appendix D.2): minimize Σ Huber_δ(log L̂(Cᵢ) − log Lᵢ) with δ = 10⁻³,
log L̂ = logsumexp(e, a − α·log C), E = eᵉ; from a grid of starting points, keeping the best. Two departures,
both for the reasons Besiroglu et al. (2024) found the original fit wanting: scipy's `least_squares` (trust
region, its `huber` loss with `f_scale` = δ, an analytic Jacobian) rather than L-BFGS, which stopped early
there; and log C centred on the points' geometric mean, so that A is the excess loss at the middle of the
ladder (well conditioned) instead of a number near 10¹⁵ that trades off against α.

A fit says whether it converged: the optimizer's own test, and α inside `ALPHA_RANGE` (a curve whose α runs off
to 0, below, or to an exponent no language model shows is not a power law the points determine). The range is
checked after the fit rather than imposed as bounds, which cost the trust region a third more time. With fewer
distinct x values than its three parameters there is nothing to fit, and `fit_curve` refuses (`TooFewRungs`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares

HUBER_DELTA = 1e-3  # Hoffmann et al.'s δ, in log-loss units: residuals beyond it count linearly (robust to one bad run)
N_PARAMETERS = 3  # E, A, α
ALPHA_RANGE = (1e-6, 4.0)  # loss exponents measured in LM scaling sit near 0.05–0.6; 4 is far outside
START_E = (0.0, 0.5, 0.9)  # × the smallest loss
START_ALPHA = (0.1, 0.3, 1.0)


class TooFewRungs(ValueError):
    """Fewer distinct rungs than the curve has parameters."""


@dataclass(frozen=True)
class Curve:
    """A fitted L(C) = E + A·C^-α; `theta` = (log E, log A at `ref`, α) is what the optimizer moved, `ref` the
    geometric mean of the points' C; `converged` and `note` say whether it is to be believed."""

    theta: tuple[float, float, float]
    ref: float
    converged: bool
    note: str = ""

    @property
    def E(self) -> float:
        """The irreducible loss, the curve's limit at infinite compute."""
        return math.exp(self.theta[0])

    @property
    def alpha(self) -> float:
        """The exponent: how fast the reducible loss falls with compute."""
        return self.theta[2]

    @property
    def A(self) -> float:
        """A in the units of C (the curve's coefficient of C^-α)."""
        return math.exp(self.theta[1] + self.alpha * math.log(self.ref))

    def predict(self, c) -> np.ndarray:
        """L̂ at compute (or size) `c`."""
        return predict(np.asarray(self.theta, dtype=float), self.ref, c)


def predict(theta: np.ndarray, ref: float | np.ndarray, c) -> np.ndarray:
    """L̂(c) for parameter rows `theta` [..., 3] (broadcast against `c`)."""
    theta = np.asarray(theta, dtype=float)
    x = np.log(np.asarray(c, dtype=float) / ref)
    return np.exp(theta[..., 0]) + np.exp(theta[..., 1] - theta[..., 2] * x)


def residuals(theta: np.ndarray, x: np.ndarray, log_y: np.ndarray) -> np.ndarray:
    """log L̂ − log y at x [P], for θ [3] or rows θ [B, 3] (then log_y [B, P])."""
    return np.logaddexp(theta[..., :1], theta[..., 1:2] - theta[..., 2:] * x) - log_y


def jacobian(theta: np.ndarray, x: np.ndarray, log_y: np.ndarray | None = None) -> np.ndarray:
    """∂ residuals / ∂θ: [P, 3] for θ [3], [B, P, 3] for rows θ [B, 3] (log_y unused: scipy passes it)."""
    log_fit = np.logaddexp(theta[..., :1], theta[..., 1:2] - theta[..., 2:] * x)
    share_e = np.exp(theta[..., :1] - log_fit)  # ∂ log L̂ / ∂e: E's share of L̂
    share_a = np.exp(theta[..., 1:2] - theta[..., 2:] * x - log_fit)
    return np.stack([share_e, share_a, -x * share_a], axis=-1)


def starts(x: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """The grid of starting points: E a share of the smallest loss, α from START_ALPHA, A then set by the
    median excess loss at x = 0."""
    found = []
    for share in START_E:
        for alpha in START_ALPHA:
            e = share * y.min()
            a = max(float(np.median((y - e) * np.exp(alpha * x))), 1e-9)
            found.append(np.array([math.log(max(e, 1e-6 * y.min())), math.log(a), alpha]))
    return found


def solve(x: np.ndarray, y: np.ndarray, initial: list[np.ndarray]) -> tuple[np.ndarray, bool]:
    """The best of `least_squares` from each initial θ: (θ, converged)."""
    log_y = np.log(y)
    fits = [least_squares(residuals, theta, jac=jacobian, args=(x, log_y), loss="huber", f_scale=HUBER_DELTA)
            for theta in initial]
    best = min(fits, key=lambda found: found.cost)  # the first of the cheapest
    return best.x, bool(best.status > 0 and ALPHA_RANGE[0] < best.x[2] < ALPHA_RANGE[1])


def fit_curve(c, y) -> Curve:
    """The curve through points (c, y), c > 0 and y > 0 (repeated c: seeds at one rung); TooFewRungs with fewer
    distinct c than parameters."""
    c, y = np.asarray(c, dtype=float), np.asarray(y, dtype=float)
    rungs = len(np.unique(c))
    if rungs < N_PARAMETERS:
        raise TooFewRungs(f"{rungs} rung{'s' if rungs != 1 else ''} for {N_PARAMETERS} parameters (E, A, α): a curve "
                          f"needs at least {N_PARAMETERS} rungs")
    ref = float(np.exp(np.log(np.unique(c)).mean()))
    x = np.log(c / ref)
    theta, converged = solve(x, y, starts(x, y))
    note = "" if converged else (f"did not converge to a falling power law (α = {theta[2]:.3g}; a curve needs 0 < α < "
                                 f"{ALPHA_RANGE[1]:g})")
    log_e, log_a, alpha = (float(v) for v in theta)
    return Curve((log_e, log_a, alpha), ref, converged, note)
