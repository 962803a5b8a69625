"""The figures whose data the page does not filter, as Plotly JSON (traces and layout): attention logits by
layer, output-logit growth, the spike timeline, cost, and loss against compute. Same data and captions as the
PNG figures of `harness plot` (`analysis.plots`); each trace's `legendgroup` is its arm, so the page shows and
hides an arm in every figure at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from matplotlib.colors import to_hex

from analysis.plots import attention, compute, cost, logits, spikes
from analysis.plots.base import Context, at_lr, seed_band

HEIGHT = 360


@dataclass(frozen=True)
class Figure:
    """One figure of the page: `plotly` is its JSON, or None for a figure the page's script computes."""

    name: str
    title: str
    caption: str
    sql: list[str]
    plotly: dict | None = None


def _axis(i: int) -> str:
    return "" if i == 0 else str(i + 1)


def layout(titles: list[str], x: list[dict], y: list[dict], height: int = HEIGHT) -> dict:
    """Side-by-side panels, one axis pair each (`x`, `y`: per-panel axis settings)."""
    panels = {"grid": {"rows": 1, "columns": len(titles), "pattern": "independent"}, "height": height,
              "margin": {"t": 40, "b": 50, "l": 60, "r": 10}, "hovermode": "closest",
              "legend": {"orientation": "h", "y": -0.2}}
    for i, title in enumerate(titles):
        panels[f"xaxis{_axis(i)}"] = x[i]
        panels[f"yaxis{_axis(i)}"] = {**y[i], "title": {"text": title}}
    return panels


def band_traces(band: pd.DataFrame, ctx: Context, panel: int, legend: bool, x: str = "step") -> list[dict]:
    """Per arm: its seed band (a filled area) and its mean line, hover giving the value and the seed count."""
    traces = []
    for arm in [a for a in ctx.colors if a in set(band["arm"])]:
        rows, color = band[band["arm"] == arm].sort_values(x), to_hex(ctx.colors[arm])
        axes = {"xaxis": f"x{_axis(panel)}", "yaxis": f"y{_axis(panel)}"}
        common = {"legendgroup": arm, "meta": arm, **axes}
        traces.append({**common, "x": rows[x].tolist() + rows[x].tolist()[::-1],
                       "y": rows["high"].tolist() + rows["low"].tolist()[::-1], "fill": "toself", "fillcolor": color,
                       "opacity": 0.2, "line": {"width": 0}, "hoverinfo": "skip", "showlegend": False,
                       "type": "scatter", "mode": "lines"})
        traces.append({**common, "x": rows[x].tolist(), "y": rows["mean"].tolist(), "customdata": rows["n"].tolist(),
                       "name": ctx.sweep.shown(arm), "showlegend": legend, "type": "scatter", "mode": "lines",
                       "line": {"color": color, "width": 2},
                       "hovertemplate": f"{ctx.sweep.shown(arm)}<br>step %{{x}}<br>%{{y:.4g}} (%{{customdata}} "
                       "seeds)<extra></extra>"})
    return traces


def _attention(ctx: Context) -> Figure:
    found, sql = attention.frame(ctx)
    found = at_lr(found, ctx.top_lr)
    layers = sorted(found["layer"].unique())[:attention.MAX_PANELS]
    bands = [seed_band(found[found["layer"] == layer], ["arm", "step"], log=True) for layer in layers]
    traces = [t for i, band in enumerate(bands) for t in band_traces(band, ctx, i, i == 0)]
    fig = {"data": traces,
           "layout": layout([f"layer {layer}" for layer in layers], [{"title": {"text": "step"}}] * len(layers),
                                            [{"type": "log"}] * len(layers))} if layers else None
    return Figure("attention", "Max attention logit by layer", attention.CAPTION, [sql], fig)


def _logits(ctx: Context) -> Figure:
    frames, sql = logits.series(ctx)
    shown = [(name, label, scale) for name, label, scale in logits.SERIES if not at_lr(frames[name], ctx.top_lr).empty]
    bands = [seed_band(at_lr(frames[name], ctx.top_lr), ["arm", "step"], log=scale == "log")
             for name, _, scale in shown]
    traces = [t for i, band in enumerate(bands) for t in band_traces(band, ctx, i, i == 0)]
    fig = {"data": traces,
           "layout": layout([label for _, label, _ in shown], [{"title": {"text": "step"}}] * len(shown),
                                            [{"type": scale} for _, _, scale in shown])} if shown else None
    return Figure("logits", "Output-logit growth", logits.CAPTION, sql, fig)


def _spikes(ctx: Context) -> Figure:
    frame, sql = spikes.events(ctx)
    symbols = {"loss_spike": "circle", "grad_norm_spike": "triangle-up", "diverged": "x"}
    traces = [{"type": "scatter", "mode": "markers", "x": rows["step"].tolist(),
               "y": [ctx.sweep.shown(arm)] * len(rows), "legendgroup": arm, "meta": arm, "showlegend": False,
               "customdata": rows[["run_id", "seed", "kind"]].values.tolist(),
               "marker": {"symbol": rows["kind"].map(symbols).tolist(), "color": to_hex(ctx.colors[arm]), "size": 9},
               "hovertemplate": "%{customdata[2]} at step %{x}<br>run %{customdata[0]}, seed "
               "%{customdata[1]}<extra></extra>"}
              for arm, rows in frame.groupby("arm")]
    labels = [ctx.sweep.shown(arm) for arm in ctx.colors]
    fig = {"data": traces, "layout": layout(["arm"], [{"title": {"text": "step"}}],
                                            [{"type": "category", "categoryorder": "array",
                                              "categoryarray": labels[::-1], "automargin": True}],
                                            height=max(200, 60 + 40 * len(labels)))} if traces else None
    caption = ("Each marker is one event of one run (all LRs): ● loss spike, ▲ grad-norm spike, × divergence; hover "
               "one for its run and seed.")
    return Figure("spikes", "Spike and divergence timeline", caption, [sql], fig)


def _cost(ctx: Context) -> Figure:
    frame, sql = cost.counts(ctx)
    traces = [{"type": "bar", "orientation": "h", "x": [row[column]], "y": [ctx.sweep.shown(row["arm"])],
               "name": ctx.sweep.shown(row["arm"]), "legendgroup": row["arm"], "meta": row["arm"], "showlegend": False,
               "marker": {"color": to_hex(ctx.colors[row["arm"]])}, "xaxis": f"x{_axis(i)}", "yaxis": f"y{_axis(i)}",
               "hovertemplate": f"%{{y}}: %{{x:.4s}} {label}<extra></extra>"}
              for i, (column, label) in enumerate(cost.SERIES) for row in frame.to_dict("records")]
    y = {"type": "category", "automargin": True, "autorange": "reversed"}
    fig = {"data": traces,
           "layout": layout([""] * len(cost.SERIES), [{"title": {"text": label}} for _, label in cost.SERIES],
                                            [y] * len(cost.SERIES), height=max(200, 80 + 30 * len(frame)))}
    return Figure("cost", "Parameters and FLOPs per arm", cost.CAPTION, [sql], fig)


def _compute(ctx: Context) -> Figure:
    frame, sql = compute.points(ctx)
    frame = at_lr(frame, ctx.best_lr)
    traces = []
    for i, (column, label, _) in enumerate(compute.AXES):
        found = frame[frame[column] > 0] if column == "flops" else frame
        x = found.groupby(["arm", "step"])[column].transform("mean")
        band = seed_band(found.assign(value=found["val_loss"], x=x), ["arm", "x"])
        traces += band_traces(band, ctx, i, i == 0, x="x")
    fig = {"data": traces,
           "layout": layout(["validation loss"] * 2,
                            [{"title": {"text": label}, "type": scale} for _, label, scale in compute.AXES],
                                            [{}, {}])} if not frame.empty else None
    return Figure("compute", "Loss against compute and wall time", compute.CAPTION, [sql], fig)


FIGURES = {"attention": _attention, "logits": _logits, "spikes": _spikes, "cost": _cost, "compute": _compute}
