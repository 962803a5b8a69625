"""When a fitted curve must not be extrapolated: the fit is degenerate, whatever its optimizer said.

A curve L = E + A·C^-α from a few rungs can converge and still say nothing beyond them. Extrapolation is refused,
with the reason in one line ("no extrapolation: …", shown by compare, plot and the report), when

- **too few rungs to test the form**: with three rungs the three parameters pass through the rungs' centres
  exactly, so nothing checks that the points lie on such a curve at all; extrapolation needs `MIN_RUNGS`;
- **a parameter sits at its bound**: E near 0 (`E_FLOOR` of the smallest loss: the rungs do not bend towards a
  floor, so E is not identified and the curve falls like a pure power law for ever), α at either end of the
  fit's range, or A near 0 (no reducible loss left to extrapolate);
- **the bootstrap fits disagree wildly**: more than `BOUND_SHARE` of the replicates put a parameter at its bound,
  or the 95% range of their prediction at the target is wider than the whole loss range the arm's rungs span
  (the extrapolation is less certain than everything the ladder measured).

Each rule is a reason a reader can check against the fits table (E, α, A and their intervals are shown). The
fitted curve is still drawn across the ladder's own rungs, where it interpolates.
"""

from __future__ import annotations

import numpy as np

from analysis.ladder.curve import ALPHA_RANGE, Curve, predict

MIN_RUNGS = 4
E_FLOOR = 0.01  # E below 1% of the smallest loss is E at its bound (0)
ALPHA_BOUNDS = (0.01, 0.98 * ALPHA_RANGE[1])  # α under 0.01 (the loss barely falls) or at the fit's ceiling
A_FLOOR = 1e-6  # the reducible loss mid-ladder below this share of the smallest loss: none left
BOUND_SHARE = 0.2


def bounds_hit(theta, smallest_loss: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per parameter row θ = (log E, log A at ref, α) [..., 3]: whether E, A and α each sit at a bound."""
    theta = np.asarray(theta, dtype=float)
    alpha = theta[..., 2]
    return (np.exp(theta[..., 0]) < E_FLOOR * smallest_loss, np.exp(theta[..., 1]) < A_FLOOR * smallest_loss,
            (alpha < ALPHA_BOUNDS[0]) | (alpha > ALPHA_BOUNDS[1]))


def _bound_reason(curve: Curve, smallest_loss: float) -> str | None:
    e_hit, a_hit, alpha_hit = bounds_hit(curve.theta, smallest_loss)
    if e_hit:
        return (f"the irreducible loss E ran to its bound (E = {curve.E:.2g}, under {E_FLOOR:.0%} of the smallest loss "
                f"{smallest_loss:.3g}): the rungs do not bend towards a floor, so E is not identified")
    if alpha_hit:
        return (f"the exponent α ran to its bound (α = {curve.alpha:.3g}, outside "
                f"{ALPHA_BOUNDS[0]:g}–{ALPHA_BOUNDS[1]:g})")
    if a_hit:
        return (f"the reducible loss ran to its bound ({np.exp(curve.theta[1]):.2g} mid-ladder): nothing left to "
                "extrapolate")
    return None


def refusal(curve: Curve, rungs: int, boot: np.ndarray, rung_means: np.ndarray, target: float) -> str | None:
    """Why `curve` (fitted on `rungs` rungs whose mean losses are `rung_means`) must not be extrapolated to
    `target`, given its bootstrap replicates `boot` [B, 3] (NaN: did not converge); None when it may be."""
    if rungs < MIN_RUNGS:
        return (f"no extrapolation: {rungs} rungs determine the 3 parameters (E, A, α) exactly, so nothing tests that "
                f"the points lie on such a curve; extrapolation needs {MIN_RUNGS} rungs or more")
    smallest = float(np.nanmin(rung_means))
    reason = _bound_reason(curve, smallest)
    if reason:
        return f"no extrapolation: {reason}"
    valid = boot[~np.isnan(boot[:, 0])]
    if len(valid):
        share = float(np.logical_or.reduce(bounds_hit(valid, smallest)).mean())
        if share > BOUND_SHARE:
            return (f"no extrapolation: {share:.0%} of the bootstrap fits put E, A or α at its bound (the fit is "
                    "unstable)")
        predicted = predict(valid, curve.ref, target)
        low, high = np.nanquantile(predicted, [0.025, 0.975])
        spread = float(np.nanmax(rung_means) - np.nanmin(rung_means))
        if high - low > spread:
            return (f"no extrapolation: the bootstrap fits disagree — their 95% range at the target ({high - low:.3g} "
                    f"nats) is wider than the loss range the rungs span ({spread:.3g} nats)")
    return None
