"""What the fitted curves say beyond the ladder: each variant's loss at a target, its gap to the baseline, and
where its curve crosses the baseline's.

All three are computed on every bootstrap replicate too (the same replicate for both sides of a gap or a
crossover, so the pairing of seeds carries through), and their intervals are `fits.expanded_interval`s.

**Crossover**: the compute (or size) where the two curves cross, searched from the smaller of the two ladders'
first rungs up to the target, on a log grid of `GRID` points refined by linear interpolation: the first sign
change of the difference (two such curves cross at most twice). Its interval is over the replicates that cross
in that range; `crosses` is the share that do. A variant whose fitted curve does not cross in range gets
"none in range" with that share (a high share says the point fit's "none" is fragile).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError
from analysis.ladder.curve import predict
from analysis.ladder.degenerate import refusal
from analysis.ladder.fits import LadderFit, expanded_interval, points_of
from analysis.ladder.points import LadderData

# no target given: two decades of compute (one of size) past the largest rung
DEFAULT_REACH = {"compute": 100, "params": 10}
GRID = 2000
AXIS_UNITS = {"compute": ("FLOPs", "--target-flops"), "params": ("parameters", "--target-params")}
COLUMNS = ["arm", "rungs", "seeds", "diverged", "best_lrs", "E", "E_low", "E_high", "alpha", "alpha_low", "alpha_high",
           "A", "A_low", "A_high", "predicted", "low", "high", "gap", "gap_low", "gap_high", "crossover", "cross_low",
           "cross_high", "crosses", "note"]


@dataclass(frozen=True)
class Target:
    """Where to extrapolate: a value on the fit's axis, and whether it was asked for or is the default reach."""

    axis: str
    value: float
    given: bool

    def describe(self) -> str:
        """'1e+17 FLOPs', with '(the default: 100× the largest rung)' when none was asked for."""
        unit = AXIS_UNITS[self.axis][0]
        return f"{self.value:.3g} {unit}" + ("" if self.given else f" (the default: {DEFAULT_REACH[self.axis]}× the "
                                             "largest rung)")


def resolve_target(data: LadderData, axis: str, value: float | None) -> Target:
    """The target on `axis` (default: beyond the largest rung); AnalysisError for one not beyond the largest rung."""
    top = float(np.nanmax(data.axis(axis)))
    if value is None:
        return Target(axis, top * DEFAULT_REACH[axis], False)
    unit, option = AXIS_UNITS[axis]
    if not value > top:
        raise AnalysisError(f"{option} {value:g} is not beyond the largest rung ({top:.3g} {unit}): extrapolation "
                            f"predicts past the ladder; give a target above {top:.3g}.")
    return Target(axis, float(value), True)


def crossings(theta_a: np.ndarray, ref_a, theta_b: np.ndarray, ref_b, low: float, high: float) -> np.ndarray:
    """The first x in [low, high] where curve a − curve b changes sign, per row of θ [..., 3]; NaN where none."""
    grid = np.geomspace(low, high, GRID)
    diff = (predict(theta_a[..., None, :], np.asarray(ref_a)[..., None], grid)
            - predict(theta_b[..., None, :], np.asarray(ref_b)[..., None], grid))
    flips = np.sign(diff[..., :-1]) * np.sign(diff[..., 1:]) < 0
    found = flips.any(axis=-1)
    i = np.argmax(flips, axis=-1)
    d0, d1 = np.take_along_axis(diff, i[..., None], -1)[..., 0], np.take_along_axis(diff, i[..., None] + 1, -1)[..., 0]
    log_x = (np.log(grid[i])
             + (np.log(grid[np.minimum(i + 1, GRID - 1)]) - np.log(grid[i])) * d0 / np.where(found, d0 - d1, 1.0))
    return np.where(found, np.exp(log_x), np.nan)


def _crossover(fit: LadderFit, v: int, target: float) -> tuple[float, float, float, float]:
    """(crossover, its interval, share of replicates crossing) of variant v with the baseline (variant 0)."""
    x = fit.data.axis(fit.axis)
    low = float(np.nanmin(x[[0, v]]))
    refs = fit.refs
    point = crossings(np.asarray(fit.curve(v).theta), refs[v], np.asarray(fit.curve(0).theta), refs[0], low, target)
    boot = crossings(fit.boot[:, v], refs[v], fit.boot[:, 0], refs[0], low, target)
    valid = ~np.isnan(fit.boot[:, v, 0]) & ~np.isnan(fit.boot[:, 0, 0])
    share = float(np.mean(~np.isnan(boot[valid]))) if valid.any() else np.nan
    lo, hi = (expanded_interval(boot[valid & ~np.isnan(boot)][:, None], min(fit.df[v], fit.df[0])) if share > 0
              else ([np.nan], [np.nan]))
    return float(point), float(lo[0]), float(hi[0]), share


def refusals(fit: LadderFit, target: Target) -> list[str | None]:
    """Per variant, why its fitted curve must not be extrapolated to the target (`analysis.ladder.degenerate`),
    or None: it may be (a variant without a converged curve: None too, its note already says why)."""
    found: list[str | None] = []
    for v in range(len(fit.curves)):
        if not fit.fitted(v):
            found.append(None)
            continue
        loss = fit.data.loss[v]
        rung_means = np.array([np.nanmean(row) for row in loss if not np.isnan(row).all()])
        found.append(refusal(fit.curve(v), len(rung_means), fit.boot[:, v], rung_means, target.value))
    return found


def _row(fit: LadderFit, v: int, target: Target, at: tuple[np.ndarray, np.ndarray], refused: list[str | None]) -> dict:
    data = fit.data
    row: dict[str, Any] = {"arm": data.labels[v], "rungs": int((~np.isnan(data.loss[v])).any(-1).sum()),
           "seeds": int(data.n_seeds[v].sum()), "diverged": int(data.diverged[v].sum()),
           "best_lrs": " ".join("-" if np.isnan(lr) else f"{lr:g}" for lr in data.lr[v]), "note": fit.notes[v]}
    if not fit.fitted(v):
        return row
    point, boot = at
    curve = fit.curve(v)
    e_low, e_high = expanded_interval(np.exp(fit.boot[:, v, 0]), fit.df[v])
    a_low, a_high = expanded_interval(fit.boot[:, v, 2], fit.df[v])
    big_a_low, big_a_high = expanded_interval(np.exp(fit.boot[:, v, 1] + fit.boot[:, v, 2] * np.log(curve.ref)),
                                              fit.df[v])
    row |= {"E": curve.E, "E_low": e_low, "E_high": e_high, "alpha": curve.alpha, "alpha_low": a_low,
            "alpha_high": a_high, "A": curve.A, "A_low": big_a_low, "A_high": big_a_high}
    notes = [f"{1 - share:.0%} of bootstrap fits did not converge" for share in [fit.converged_share()[v]] if share < 1]
    reason = refused[v]
    if reason:
        row["note"] = "; ".join([reason, *notes])
        return row
    p_low, p_high = expanded_interval(boot[:, v], fit.df[v])
    row |= {"predicted": point[v], "low": p_low, "high": p_high}
    if v > 0 and fit.fitted(0) and refused[0]:
        notes.append("no gap to the baseline: its own fit is not extrapolated")
    elif v > 0 and fit.fitted(0):
        g_low, g_high = expanded_interval(boot[:, v] - boot[:, 0], min(fit.df[v], fit.df[0]))
        crossover, c_low, c_high, crosses = _crossover(fit, v, target.value)
        row |= {"gap": point[v] - point[0], "gap_low": g_low, "gap_high": g_high, "crossover": crossover,
                "cross_low": c_low, "cross_high": c_high, "crosses": crosses}
        if np.isnan(crossover):
            notes.append(f"no crossover with the baseline from the first rung to the target ({crosses:.0%} of "
                         "bootstrap fits cross)")
    row["note"] = "; ".join(notes)
    return row


def extrapolate(fit: LadderFit, target: Target) -> pd.DataFrame:
    """`COLUMNS`, one row per variant (the baseline first): its curve with intervals, the loss predicted at the
    target, the gap to the baseline there and the crossover with the baseline's curve."""
    at, refused = fit.predict(target.value), refusals(fit, target)
    rows = [_row(fit, v, target, at, refused) for v in range(len(fit.data.variants))]
    return pd.DataFrame(rows).reindex(columns=COLUMNS)


@dataclass(frozen=True)
class Drawn:
    """What a figure draws of one variant: its runs (x, loss) and, when it has a converged curve, the curve from
    its first rung to the target with the band of its bootstrap replicates (expanded intervals)."""

    label: str
    x: np.ndarray
    loss: np.ndarray
    curve: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None  # grid, L̂, low, high
    note: str


def drawn(fit: LadderFit, target: Target, points: int = 120) -> list[Drawn]:
    """Every variant of the fit, as `Drawn` (a variant whose curve did not converge is drawn as points only)."""
    x = fit.data.axis(fit.axis)
    refused = refusals(fit, target)
    found = []
    for v, label in enumerate(fit.data.labels):
        xs, ys = points_of(x[v], fit.data.loss[v])
        curve = None
        if fit.fitted(v):  # a refused curve is drawn across its own rungs only, where it interpolates
            grid = np.geomspace(np.nanmin(x[v]), np.nanmax(x[v]) if refused[v] else target.value, points)
            low, high = expanded_interval(predict(fit.boot[:, v, None, :], fit.refs[v], grid), fit.df[v])
            curve = (grid, fit.curve(v).predict(grid), low, high)
        found.append(Drawn(label, xs, ys, curve, refused[v] or fit.notes[v]))
    return found
