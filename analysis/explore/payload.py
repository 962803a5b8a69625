"""What the page's script draws from: every finished run with its outcome, each run's signals for the loss curves
and the one-run view (`analysis.explore.run_data`), the arms' colours and labels, and the figures that need no
filtering as ready Plotly JSON (`analysis.explore.fixed`).

The LR figure and the loss curves are computed in the page from the runs, so that the arm, LR and seed
filters and the smoothing apply to means and bands, not only to what is shown; they follow the same rules as
`harness plot` (`analysis.plots.bands`, `analysis.signals.sensitivity`).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.colors import to_hex

from analysis.explore import fixed
from analysis.explore.fixed import Figure
from analysis.explore.run_data import LOSSES, metric_series, run_view, runs_where
from analysis.plots import lr
from analysis.plots.bands import T_FROM, describe, t_quantiles
from analysis.plots.base import Context
from analysis.reading.frames import CURVE_POINTS

DEFAULT_EMA = 0.6  # light smoothing of the training curves by default; the page has a slider (0: none)


def _runs(runs: pd.DataFrame) -> list[dict]:
    """One record per run with an outcome: its identity, outcome, metric and ℓ (the LR figure's value)."""
    columns = ["run_id", "arm", "lr", "seed", "outcome", "value", "loss"]
    return runs[columns].sort_values(["arm", "lr", "seed"]).to_dict("records")


def computed_figures(ctx: Context, lr_sql: list[str], curves_sql: list[str]) -> list[Figure]:
    """The two figures the page computes from the runs, with their captions."""
    lr_caption = (f"Mean {ctx.metric} over the selected seeds of each arm at each LR; a diverged run counts as the "
                  "loss at initialization ℓ₀, and an × marks an LR where some selected seed diverged. "
                  f"{describe('Each error bar')} The faint points are the runs: hover one for its id, click it to open "
                  "everything it recorded.")
    curves_caption = ("Mean over the selected, completed seeds of each arm at the chosen LR (by default each arm's "
                      f"best). {describe()} The training loss is smoothed per run (a debiased exponential moving "
                      "average; the slider sets its weight, 0 for none) before averaging; steps are averaged into at "
                      "most 300 buckets. 'show runs' draws each run: click one to open everything it recorded.")
    return [Figure("lr", "Loss against learning rate", lr_caption, lr_sql),
            Figure("curves", "Loss curves by arm", curves_caption, curves_sql)]


def figure_data(ctx: Context) -> tuple[dict, list[str], list[str]]:
    """What the LR figure and the loss curves are drawn from (the page's JSON: arms, runs, their loss curves) and the
    SQL of the two."""
    _, runs, lr_sql = lr.points(ctx)
    losses, loss_sql = metric_series(ctx.sweep, LOSSES, CURVE_POINTS, runs_where())
    data = {
        "metric": ctx.metric, "baseline": ctx.baseline, "ema": DEFAULT_EMA, "t_from": T_FROM, "t975": t_quantiles(),
        "arms": [{"name": arm, "label": ctx.sweep.shown(arm), "color": to_hex(ctx.colors[arm]),
                  "best_lr": ctx.best_lr.get(arm), "top_lr": ctx.top_lr.get(arm)} for arm in ctx.colors],
        "lrs": sorted(runs["lr"].dropna().unique().tolist()),
        "seeds": sorted(runs["seed"].dropna().unique().tolist()),
        "runs": _runs(runs),
        "curves": losses,
    }
    return data, lr_sql, [loss_sql]


def explore(ctx: Context) -> tuple[list[Figure], dict, list[str]]:
    """The page's figures, in order (the LR figure and the loss curves first), the data its script draws from (the
    one-run view's too), and the SQL of the one-run view."""
    data, lr_sql, curves_sql = figure_data(ctx)
    view = run_view(ctx.sweep, loss_points=None)
    drawn = [build(ctx) for build in fixed.FIGURES.values()]
    data["curves"].update(view.curves)
    data.update(layers=view.layers, events=view.events, info=view.info,
                fixed={figure.name: figure.plotly for figure in drawn})
    return computed_figures(ctx, lr_sql, curves_sql) + drawn, data, [*curves_sql, *view.sql.values()]
