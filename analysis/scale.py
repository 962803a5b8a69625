"""Does the conclusion hold as the model grows? Arm rankings at each width or depth, and where they reverse.

A sweep has a scale axis when `d_model` or `n_layers` takes several values among its finished runs. The
*variant* of a run is its value on every other switch that varies within a scale and takes the same set of
values at every scale (so `qk_norm` counts, while `d_ff`, derived from `d_model`, does not). At each
scale each variant is scored by its best mean metric over LRs; a pair of variants whose order differs
between two scales is a reversal.
"""

from __future__ import annotations

import itertools

import pandas as pd

from analysis.frames import Sweep
from db.views import RUNS_LEADING, RUNS_TRAILING

SCALE_AXES = ("d_model", "n_layers")
NOT_SWITCHES = {*RUNS_LEADING, *RUNS_TRAILING, "lr", "trial"}


def scale_axis(sweep: Sweep) -> str | None:
    """The first of `SCALE_AXES` with several values among the finished runs, or None."""
    finished = sweep.finished
    return next((axis for axis in SCALE_AXES if axis in finished and finished[axis].nunique() > 1), None)


def variant_switches(runs: pd.DataFrame, axis: str) -> list[str]:
    """Switches that define a variant across scales (see the module docstring)."""
    chosen = []
    for column in runs.columns:
        if column in NOT_SWITCHES or column == axis or column.endswith("seed"):
            continue
        per_scale = runs.groupby(axis)[column].agg(lambda values: frozenset(values.dropna().astype(str)))
        if len(set(per_scale)) == 1 and len(per_scale.iloc[0]) > 1:
            chosen.append(column)
    return chosen


def rankings(sweep: Sweep, metric: str) -> tuple[pd.DataFrame, list[str]] | None:
    """(scale, variant, loss, rank) rows and one sentence per reversal; None without a scale axis."""
    axis = scale_axis(sweep)
    if axis is None:
        return None
    completed = sweep.finished[sweep.finished["status"] == "completed"]
    switches = variant_switches(completed, axis) or ["arm"]
    label = completed[switches].astype(str).apply(lambda row: ", ".join(f"{k}={v}" for k, v in row.items()), axis=1)
    means = completed.assign(variant=label).groupby([axis, "variant", "lr"], dropna=False)[metric].mean()
    table = means.groupby(level=[axis, "variant"]).min().rename("loss").reset_index()
    table["rank"] = table.groupby(axis)["loss"].rank(method="min").astype(int)
    table = table.rename(columns={axis: "scale"}).assign(axis=axis).sort_values(["scale", "rank"])
    return table[["axis", "scale", "variant", "loss", "rank"]].reset_index(drop=True), _reversals(table, axis)


def _reversals(table: pd.DataFrame, axis: str) -> list[str]:
    loss = table.pivot(index="variant", columns="scale", values="loss")
    found = []
    for small, large in itertools.combinations(loss.columns, 2):
        for a, b in itertools.combinations(loss.index, 2):
            before, after = loss.at[a, small] - loss.at[b, small], loss.at[a, large] - loss.at[b, large]
            if before * after < 0:
                first, second = (a, b) if before < 0 else (b, a)
                found.append(f"{first} beats {second} at {axis}={small:g} but not at {axis}={large:g}")
    return found
