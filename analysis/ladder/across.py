"""Does the conclusion hold as the model grows? Each variant's best result at each scale, and the reversals
that are resolved (the rule is `analysis.ladder.reversals`).

The scale axis is the field asked for (`harness compare --across FIELD`), else the first of `d_model`,
`n_layers` with several values among the runs. The *variant* of a run is its value on every other switch
that varies within a scale and takes the same set of values at every scale (so `qk_norm` counts, while
`d_ff`, derived from `d_model`, does not); with no such switch, the arm (a ladder's arm without its `@rung`). Each run
enters as its ℓ, the LR sensitivity's (`analysis.signals.sensitivity.run_losses`: a divergence counts as ℓ₀), so a
variant's best LR is chosen the same way as everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError, closest, suggestion
from analysis.ladder import SEPARATOR as LADDER_SEPARATOR
from analysis.ladder.reversals import Reversals, scale_reversals
from analysis.reading.frames import Sweep
from analysis.signals.sensitivity import run_losses
from db.views import RUNS_LEADING, RUNS_TRAILING

SCALE_AXES = ("d_model", "n_layers")
NOT_SWITCHES = {*RUNS_LEADING, *RUNS_TRAILING, "lr", "trial", "confirms", "arm_values"}
COLUMNS = ["variant", "best_lr", "n", "diverged", "loss", "ci_low", "ci_high", "rank", "reversal"]
NO_REVERSAL = "no resolved reversal"


def scale_axis(sweep: Sweep) -> str | None:
    """The first of `SCALE_AXES` with several values among the finished runs, or None."""
    finished = sweep.finished
    return next((axis for axis in SCALE_AXES if axis in finished and finished[axis].nunique() > 1), None)


def config_fields(sweep: Sweep) -> list[str]:
    """The columns of the sweep's runs that are switches (config fields other than LR and seeds)."""
    return [column for column in sweep.runs.columns if column not in NOT_SWITCHES and not column.endswith("seed")]


def check_across(sweep: Sweep, field: str) -> None:
    """AnalysisError unless `field` is a config field of the sweep's runs with several values among its finished
    runs."""
    fields = config_fields(sweep)
    if field not in fields:
        # The hint looks first among the fields that vary, the only ones --across can take: 'd_modle' is as close to
        # 'wd_mode' as to 'd_model' by letters, but only d_model has several values in a sweep across widths.
        varying = [name for name in fields if sweep.finished[name].nunique() > 1]
        hint = suggestion(field, varying, "fields") if closest(field, varying) else suggestion(field, fields, "fields")
        raise AnalysisError(f"--across {field!r} is not a config field of sweep {sweep.info.name!r}'s runs" + hint)
    values = sweep.finished[field].dropna().unique()
    if len(values) < 2:
        found = f"one value ({shown(values[0])})" if len(values) else "no value"
        raise AnalysisError(f"--across {field!r} takes {found} among sweep {sweep.info.name!r}'s finished runs: "
                            "nothing to compare across; it needs two or more.")


def shown(value) -> str:
    """A scale value as text: numbers without trailing zeros."""
    return f"{value:g}" if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else str(value)


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


@dataclass
class ScaleComparison:
    """Per (scale, variant) row of `COLUMNS` (the scale in a column named after the axis), one sentence per
    resolved reversal, and the SQL behind it."""

    axis: str
    table: pd.DataFrame
    reversals: list[str]
    sql: list[str]


def compare_across(sweep: Sweep, metric: str, axis: str | None = None) -> ScaleComparison | None:
    """The comparison across `axis` (default `scale_axis`); None when the sweep has no scale axis."""
    axis = axis or scale_axis(sweep)
    if axis is None:
        return None
    losses, sql = run_losses(sweep, metric)
    fields = config_fields(sweep)
    config = sweep.runs.set_index("run_id")[fields]
    runs = losses.drop(columns=[c for c in fields if c in losses.columns]).join(config, on="run_id")
    runs = runs[runs[axis].notna()]
    switches = variant_switches(runs[fields], axis)
    variant = (runs[switches].astype(str).apply(lambda row: ", ".join(f"{k}={v}" for k, v in row.items()), axis=1)
               if switches
               else "arm=" + runs["arm"].str.split(LADDER_SEPARATOR, n=1).str[0])  # a ladder's arm without its rung
    runs = runs.assign(variant=variant, lr=runs["lr"].fillna(-1.0))  # a tuned LR (none) is one LR of its own
    grid = [sorted(runs[name].unique()) for name in (axis, "variant", "lr", "seed")]
    index = pd.MultiIndex.from_product(grid)
    keys = [axis, "variant", "lr", "seed"]
    shape = [len(values) for values in grid]
    loss = runs.groupby(keys)["loss"].mean().reindex(index).to_numpy().reshape(shape)
    diverged = runs.groupby(keys)["diverged"].any().reindex(index, fill_value=False).to_numpy(dtype=bool).reshape(shape)
    found = scale_reversals(loss, diverged)
    scales, variants, lrs = grid[0], grid[1], grid[2]
    sentences, notes = _sentences(found, axis, scales, variants)
    table = _table(found, axis, scales, variants, lrs, notes)
    return ScaleComparison(axis, table, sentences, sql)


def _sentences(found: Reversals, axis: str, scales, variants) -> tuple[list[str], dict]:
    """One sentence per resolved reversal, and per (scale index, variant index) the notes of its row."""
    sentences, notes = list[str](), dict[tuple[int, int], list[str]]()
    for s, t, a, b in zip(*np.nonzero(found.flagged)):
        winner, loser = (variants[a], variants[b]) if found.delta[s, a, b] < 0 else (variants[b], variants[a])
        p = f"Holm-adjusted p {found.p_reversal[s, t, a, b]:.2g}"
        sentences.append(f"{winner} beats {loser} at {axis}={shown(scales[s])} but loses to it at "
                         f"{axis}={shown(scales[t])} ({p})")
        for here, there in ((s, t), (t, s)):
            for me, other in ((a, b), (b, a)):
                verb, opposite = ("beats", "loses to") if found.delta[here, me, other] < 0 else ("loses to", "beats")
                notes.setdefault((here, me), []).append(f"{verb} {variants[other]} here, {opposite} it at "
                                                        f"{axis}={shown(scales[there])} ({p})")
    return sentences, notes


def _table(found: Reversals, axis: str, scales, variants, lrs, notes: dict) -> pd.DataFrame:
    rows = []
    for s, scale in enumerate(scales):
        for v, variant in enumerate(variants):
            best = found.best[s, v]
            if best < 0:
                continue  # this variant has no run at this scale
            rows.append({axis: scale, "variant": variant, "best_lr": lrs[best] if lrs[best] >= 0 else np.nan,
                         "n": int(found.at_best.n[s, v]), "diverged": int(found.diverged[s, v]),
                         "loss": found.at_best.mean[s, v], "ci_low": found.at_best.low[s, v],
                         "ci_high": found.at_best.high[s, v],
                         "reversal": "; ".join(notes.get((s, v), [])) or NO_REVERSAL})
    table = pd.DataFrame(rows, columns=[axis, *COLUMNS])
    table["rank"] = table.groupby(axis)["loss"].rank(method="min").astype("Int64")
    return table.sort_values([axis, "rank"]).reset_index(drop=True)
