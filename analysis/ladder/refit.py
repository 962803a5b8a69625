"""The bootstrap's refits, all replicates of one variant at once: the same Huber fit in log space as
`analysis.ladder.curve` (the same objective and scipy's convergence tests), by a Levenberg–Marquardt
iteration vectorized over replicates.

Every replicate of a variant has the same x (its rungs, with as many slots as seeds there) and its own y, and
each starts from the full data's curve, close to its optimum. scipy's `least_squares` refitted them one call at a
time: about 40 trust-region iterations of Python overhead each, 10–20 ms a replicate, so a ladder report spent
seconds per variant there (docs/benchmarks.md, "Ladders"). Here each iteration is a few numpy operations over
[B, P] arrays and B 3×3 solves. The full data's fit keeps scipy's solver and its grid of starts
(`curve.fit_curve`); tests/analysis/ladder/test_refit.py holds these refits to scipy's answers replicate by
replicate.

The step: residuals r = log L̂ − log y, Huber weights w = min(1, δ/|r|) (iteratively reweighted least squares:
the weighted quadratic's gradient is the Huber loss's), and (JᵀWJ + λ·diag(JᵀWJ)) Δ = −JᵀWr, kept when it
lowers the Huber cost (λ shrinks) and retried with a larger λ when it does not. A replicate has converged once
it passes one of scipy's tests (`ftol`, `xtol`, `gtol` at 1e-8), as scipy would have stopped there; it goes on
until its gain falls below 1e-10 of its cost (these steps are shorter than scipy's along a flat valley, where the
Huber loss's kinks sit, so stopping at scipy's `ftol` left some a little above scipy's optimum) or
`MAX_ITERATIONS`: one that never passed a test by then has not converged.
"""

from __future__ import annotations

import numpy as np

from analysis.ladder.curve import ALPHA_RANGE, HUBER_DELTA, N_PARAMETERS, jacobian, residuals

TOLERANCE = 1e-8  # scipy's default ftol, xtol and gtol: a replicate that passed one has converged
GAIN_TOLERANCE = 1e-10  # where it stops: gains of 1e-8 still add up along a flat valley, where these steps are short
MAX_ITERATIONS = 1000  # scipy's budget is 300 evaluations; these steps are shorter, and cost microseconds
START_DAMPING = 1e-3  # λ
MIN_DAMPING = 1e-12  # so that JᵀWJ + λ·diag(JᵀWJ) stays positive definite
MAX_DAMPING = 1e16  # a replicate whose every step is refused this far has no step left


def huber_cost(r: np.ndarray) -> np.ndarray:
    """Σ over the last axis of scipy's Huber cost of residuals r with f_scale δ: ½r² within δ, δ(|r| − δ/2) beyond."""
    size = np.abs(r)
    return np.where(size <= HUBER_DELTA, 0.5 * r**2, HUBER_DELTA * (size - 0.5 * HUBER_DELTA)).sum(-1)


def refit_replicates(x: np.ndarray, y: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """θ [B, 3] minimizing each row of y [B, P] (at the shared x [P], log C about the curve's reference) from
    `start` [3], and whether each converged (scipy's tests met, α inside ALPHA_RANGE)."""
    log_y = np.log(y)
    replicates = len(log_y)
    theta = np.tile(np.asarray(start, dtype=float), (replicates, 1))
    cost = huber_cost(residuals(theta, x, log_y))
    damping = np.full(replicates, START_DAMPING)
    met = np.zeros(replicates, dtype=bool)
    going = np.arange(replicates)
    for _ in range(MAX_ITERATIONS):
        if not len(going):
            break
        going = _iterate(theta, cost, damping, met, going, x, log_y)
    return theta, met & np.isfinite(theta).all(-1) & (theta[:, 2] > ALPHA_RANGE[0]) & (theta[:, 2] < ALPHA_RANGE[1])


def _iterate(theta, cost, damping, met, going, x, log_y) -> np.ndarray:
    """One damped step for the replicates `going` (θ, cost, λ and `met`, scipy's tests passed once, updated in
    place); the replicates that go on."""
    now, ys, before = theta[going], log_y[going], cost[going]
    r = residuals(now, x, ys)  # (B, P)
    jac = jacobian(now, x)  # (B, P, 3)
    weights = np.minimum(1.0, HUBER_DELTA / np.maximum(np.abs(r), 1e-300))
    gradient = np.einsum("bpk,bp->bk", jac, weights * r)
    curvature = np.einsum("bpk,bp,bpl->bkl", jac, weights, jac)
    diagonal = np.maximum(np.einsum("bkk->bk", curvature), 1e-12)
    system = curvature + damping[going, None, None] * np.eye(N_PARAMETERS) * diagonal[:, None, :]
    step = np.linalg.solve(system, -gradient[..., None])[..., 0]
    trial = now + step
    trial_cost = huber_cost(residuals(trial, x, ys))
    better = np.isfinite(trial_cost) & (trial_cost < before)
    gain = np.where(better, before - trial_cost, np.inf)
    small_step = np.linalg.norm(step, axis=-1) < TOLERANCE * (TOLERANCE + np.linalg.norm(now, axis=-1))
    flat = np.abs(gradient).max(-1) < TOLERANCE
    theta[going[better]] = trial[better]
    cost[going[better]] = trial_cost[better]
    damping[going] = np.where(better, np.maximum(damping[going] / 3, MIN_DAMPING), damping[going] * 4)
    met[going] |= small_step | flat | (gain < TOLERANCE * before)
    done = small_step | flat | (gain < GAIN_TOLERANCE * before) | (damping[going] > MAX_DAMPING)
    return going[~done]
