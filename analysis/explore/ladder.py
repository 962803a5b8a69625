"""The report's ladder figure as Plotly JSON: the same points, curves, bands and target as `harness plot ladder`
(`analysis.plots.ladder`), with hover giving each run's rung and seed and each curve's value and interval."""

from __future__ import annotations

from matplotlib.colors import to_hex

from analysis.explore.fixed import layout
from analysis.ladder.analyse import LadderAnalysis
from analysis.ladder.extrapolate import AXIS_UNITS, drawn
from analysis.plots.base import arm_colors


def _traces(variant: str, line, color: str) -> list[dict]:
    common = {"legendgroup": variant, "type": "scatter"}
    refused = " (no extrapolation)" if line.note.startswith("no extrapolation") else ""
    traces = [{**common, "mode": "markers", "x": line.x.tolist(), "y": line.loss.tolist(), "name": line.label + refused,
               "marker": {"color": color, "size": 6, "opacity": 0.7},
               "hovertemplate": f"{line.label}<br>%{{x:.3g}}: %{{y:.4g}}<extra></extra>"}]
    if line.curve is not None:
        grid, fitted, low, high = (values.tolist() for values in line.curve)
        traces.append({**common, "mode": "lines", "x": grid + grid[::-1], "y": high + low[::-1], "fill": "toself",
                       "fillcolor": color, "opacity": 0.15, "line": {"width": 0}, "hoverinfo": "skip",
                       "showlegend": False})
        traces.append({**common, "mode": "lines", "x": grid, "y": fitted, "customdata": list(zip(low, high)),
                       "showlegend": False, "line": {"color": color, "width": 2}, "name": line.label,
                       "hovertemplate": f"{line.label} fit<br>%{{x:.3g}}: %{{y:.4g}} "
                                        "[%{customdata[0]:.4g}, %{customdata[1]:.4g}]<extra></extra>"})
    return traces


def ladder_figure(ladder: LadderAnalysis, metric: str) -> dict:
    """Plotly JSON of loss against the target's axis per arm, fits with bands, the target as a dotted line."""
    colors = {v: to_hex(c) for v, c in arm_colors(ladder.data.variants, ladder.data.variants[0]).items()}
    lines = drawn(ladder.fit, ladder.target)
    traces = [t for variant, line in zip(ladder.data.variants, lines) for t in _traces(variant, line, colors[variant])]
    unit = AXIS_UNITS[ladder.target.axis][0]
    figure = layout([metric], [{"type": "log", "title": {"text": f"training {unit}" if unit == "FLOPs" else unit}}],
                    [{}], height=420)
    figure["shapes"] = [{"type": "line", "xref": "x", "yref": "paper", "x0": ladder.target.value,
                         "x1": ladder.target.value, "y0": 0, "y1": 1,
                         "line": {"dash": "dot", "color": "#555", "width": 1}}]
    figure["annotations"] = [{"x": ladder.target.value, "xref": "x", "y": 1, "yref": "paper", "text": "target",
                              "showarrow": False, "xanchor": "right", "yanchor": "top", "xshift": -3,
                              "font": {"color": "#555"}}]
    return {"data": traces, "layout": figure}
