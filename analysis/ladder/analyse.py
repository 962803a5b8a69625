"""`analyse_ladder`: a ladder sweep's points, fits on each axis, extrapolation to a target and decision
consistency, computed once for `harness compare --ladder`, `harness plot ladder` and the report."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from analysis.ladder.consistency import decided_pairs, decision_consistency
from analysis.ladder.extrapolate import Target, extrapolate, resolve_target
from analysis.ladder.fits import LadderFit, fit_ladder
from analysis.ladder.points import LadderData, ladder_data
from analysis.reading.frames import Sweep

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
        """The queries behind the points, each one statement that runs in `harness db query`."""
        return self.data.sql


def analyse_ladder(sweep: Sweep, metric: str, baseline: str | None = None, target_flops: float | None = None,
                   target_params: float | None = None, axes: tuple[str, ...] = AXES) -> LadderAnalysis:
    """The ladder of `sweep` on `metric` against `baseline` (an arm or a ladder's arm without its rung; None: the
    sweep's); the target is `target_flops` on the compute
    fit or `target_params` on the parameters fit (default: beyond the largest rung on compute). AnalysisError when
    the sweep is not a ladder or the target is not beyond its largest rung; the target is checked before any fit."""
    data = ladder_data(sweep, metric, baseline)
    axis = "params" if target_params is not None else "compute"
    target = resolve_target(data, axis, target_params if target_params is not None else target_flops)
    fits = {name: fit_ladder(data, name) for name in dict.fromkeys((axis, *axes))}
    return LadderAnalysis(data, fits, target, extrapolate(fits[axis], target), decision_consistency(data),
                          decided_pairs(data))
