"""Will it hold at scale? A ladder sweep's fitted scaling curves, their extrapolation, and how often a smaller
rung's decisions match the largest rung's.

    points       the store → per variant, rung and seed the loss at the rung's best LR, with compute and size
    curve        one curve L = E + A·C^-α, a Huber fit in log space (scipy's least_squares)
    fits         every variant's curve on one axis, with a seed bootstrap
    extrapolate  loss at a target, gap to the baseline, crossovers, each with its interval
    consistency  DataDecide's pairwise decision accuracy per rung

numpy, scipy and pandas only (no torch); imported by `harness compare --ladder`, `harness plot ladder` and the
report, never on `harness compare`'s plain path (docs/analysis.md#will-it-hold-at-scale-ladders).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.frames import Sweep
from analysis.ladder.consistency import decided_pairs, decision_consistency
from analysis.ladder.extrapolate import Target, extrapolate, resolve_target
from analysis.ladder.fits import LadderFit, fit_ladder
from analysis.ladder.points import LadderData, ladder_data

AXES = ("compute", "params")


@dataclass
class LadderAnalysis:
    """A ladder analysed: its points, a fit per axis, the target, the extrapolation table on the target's axis
    (`analysis.ladder.extrapolate.COLUMNS`), decision consistency and the SQL behind the points."""

    data: LadderData
    fits: dict[str, LadderFit]
    target: Target
    table: pd.DataFrame
    consistency: pd.DataFrame
    decided: int  # pairs of variants resolved at the largest rung

    @property
    def fit(self) -> LadderFit:
        """The fit on the target's axis."""
        return self.fits[self.target.axis]

    @property
    def sql(self) -> list[str]:
        return self.data.sql


def analyse_ladder(sweep: Sweep, metric: str, baseline: str, target_flops: float | None = None,
                   target_params: float | None = None, axes: tuple[str, ...] = AXES) -> LadderAnalysis:
    """The ladder of `sweep` on `metric` against `baseline` (an arm); the target is `target_flops` on the compute
    fit or `target_params` on the parameters fit (default: beyond the largest rung on compute). AnalysisError when
    the sweep is not a ladder or the target is not beyond its largest rung; the target is checked before any fit."""
    data = ladder_data(sweep, metric, baseline)
    axis = "params" if target_params is not None else "compute"
    target = resolve_target(data, axis, target_params if target_params is not None else target_flops)
    fits = {name: fit_ladder(data, name) for name in dict.fromkeys((axis, *axes))}
    return LadderAnalysis(data, fits, target, extrapolate(fits[axis], target), decision_consistency(data), decided_pairs(data))
