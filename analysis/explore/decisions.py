"""The report's decision figure as Plotly JSON, the same as `harness plot decisions` (`analysis.plots.decisions`):
each rung's decision accuracy with its interval against its share of the reference's compute, and each decision's
pick at every rung, hover giving the decision, the rung's verdict and its difference; and the HTML that draws it
on the page, self-contained (its data and a script that runs once plotly.js has loaded)."""

from __future__ import annotations

from html import escape

from matplotlib.colors import to_hex

from analysis.explore.json_data import script_json
from analysis.ladder.decision_verdicts import ORDER
from analysis.plots.decisions import CAPTION, COLORS, NAMES


def _accuracy_traces(result) -> list[dict]:
    rungs = result.rungs.dropna(subset=["accuracy"])
    share, acc = rungs["compute_share"].tolist(), rungs["accuracy"].tolist()
    return [{"type": "scatter", "mode": "markers", "x": share, "y": acc, "name": "decision accuracy (95%)",
             "customdata": list(zip(rungs["rung"], rungs["low"], rungs["high"], rungs["agree"], rungs["decisions"])),
             "error_y": {"type": "data", "symmetric": False, "array": (rungs["high"] - rungs["accuracy"]).tolist(),
                         "arrayminus": (rungs["accuracy"] - rungs["low"]).tolist()},
             "hovertemplate": "%{customdata[0]}<br>%{x:.3g} of the reference's compute<br>accuracy %{y:.3g} "
                              "[%{customdata[1]:.3g}, %{customdata[2]:.3g}]: %{customdata[3]} of %{customdata[4]}"
                              "<extra></extra>"},
            {"type": "scatter", "mode": "lines", "x": [min(share, default=0.01) / 1.5, max(share, default=1) * 1.5],
             "y": [result.target] * 2, "name": f"target {result.target:g}", "line": {"dash": "dash", "color": "#555"},
             "hoverinfo": "skip"}]


def _pick_traces(result) -> tuple[list[dict], list[str]]:
    scored = result.decisions[result.decisions["reference"] == "decided"]
    several = len(result.data.variants) > 1
    names = [f"{d.sweep}: {d.decision}" if several else d.decision for d in scored.itertuples()]
    points: dict[int, tuple[list, list, list, list]] = {mark: ([], [], [], []) for mark in NAMES}
    for name, d in zip(names, scored.itertuples()):
        mine = result.picks[(result.picks["sweep"] == d.sweep) & (result.picks["first"] == d.first)
                            & (result.picks["second"] == d.second)]
        for p in mine.itertuples():
            mark = 1 if p.rung == result.data.reference else 0 if p.pick == 0 else 1 if p.agrees else -1
            x, y, text, line = points[mark]
            x.append(p.rung)
            y.append(name)
            line.append(2 if p.verdict in ORDER else 0)
            text.append(f"{p.verdict}, Δ {p.delta:.3g}" if p.delta == p.delta else str(p.verdict))
    traces = [{"type": "scatter", "mode": "markers", "x": x, "y": y, "text": text, "name": NAMES[mark], "xaxis": "x2",
               "yaxis": "y2", "marker": {"symbol": "square", "size": 14, "color": to_hex(COLORS[mark]),
                                         "line": {"width": line, "color": "#333"}},
               "hovertemplate": "%{y} at %{x}: %{text}<extra></extra>"} for mark, (x, y, text, line) in points.items()]
    return traces, names


def decisions_figure(result) -> dict:
    """Plotly JSON of a `DecisionAccuracy`: accuracy against compute share above, picks by decision and rung below."""
    picks, names = _pick_traces(result)
    layout = {"grid": {"rows": 2, "columns": 1, "pattern": "independent"}, "height": 340 + 24 * len(names),
              "margin": {"t": 30, "b": 60, "l": 260, "r": 10}, "hovermode": "closest",
              "legend": {"orientation": "h", "y": -0.1},
              "xaxis": {"type": "log", "title": {"text": "compute, share of the reference's"}},
              "yaxis": {"range": [-0.05, 1.05], "title": {"text": "decision accuracy"}, "domain": [0.6, 1]},
              "xaxis2": {"type": "category", "categoryorder": "array", "categoryarray": result.data.rungs},
              "yaxis2": {"type": "category", "categoryorder": "array", "categoryarray": names[::-1],
                         "domain": [0, 0.45]}}
    return {"data": _accuracy_traces(result) + picks, "layout": layout}


def decisions_html(result) -> str:
    """The figure's box on the page: a plot, its data and the script that draws it once plotly.js has loaded."""
    return ('<figure id="fig-decisions"><h3>Does the proxy decide right?</h3>'
            '<div class="plot" id="plot-decisions"></div>'
            f"<figcaption>{escape(CAPTION)}</figcaption></figure>"
            f'<script id="decisions-data" type="application/json">{script_json(decisions_figure(result))}</script>'
            '<script>document.addEventListener("DOMContentLoaded", function () {'
            'var fig = JSON.parse(document.getElementById("decisions-data").textContent);'
            'Plotly.newPlot("plot-decisions", fig.data, fig.layout, {responsive: true, displaylogo: false});'
            '});</script>')
