"""The dashboard's overlay of several sweeps (`/overlay?sweep=A&sweep=B`): their arms drawn in the same LR figure and
loss curves, with one filter bar (arms, LR, seeds, smoothing) acting on all of them.

Each sweep's figure data is the report's (`analysis.explore.payload.figure_data`), merged: an arm becomes
`<sweep>/<arm>` (sweep names hold no `/`), labelled `<sweep>: <label>`, coloured by its arm's name (the same arm in
two sweeps, the same colour) and dashed by its sweep; the page's script (`static/explore.js`) is the report's.
A click on a run opens the dashboard's page of that run.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from analysis.errors import AnalysisError
from analysis.reading.cells import METRIC
from analysis.report.figures import FILTER_BAR, figure_box
from analysis.report.index import crumbs, shell

DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
MAX_SWEEPS = len(DASHES)


def _merged(parts: list[tuple[str, dict]], colors: dict[str, str]) -> dict:
    """The sweeps' figure data as one: arms and runs keyed `<sweep>/<arm>`, the LRs and seeds of all."""
    first = parts[0][1]
    data = {**{k: first[k] for k in ("metric", "ema", "t_from", "t975")},
            "baseline": f"{parts[0][0]}/{first['baseline']}", "arms": [], "runs": [], "curves": {}, "fixed": {}}
    for i, (sweep, part) in enumerate(parts):
        data["arms"] += [{**arm, "name": f"{sweep}/{arm['name']}", "label": f"{sweep}: {arm['label']}", "sweep": sweep,
                          "color": colors[arm["name"]], "dash": DASHES[i]} for arm in part["arms"]]
        data["runs"] += [{**run, "arm": f"{sweep}/{run['arm']}", "sweep": sweep} for run in part["runs"]]
        for name, runs in part["curves"].items():
            data["curves"].setdefault(name, {}).update(runs)  # a run in two sweeps is one run: the same curve
    data["lrs"] = sorted({lr for _, part in parts for lr in part["lrs"]})
    data["seeds"] = sorted({seed for _, part in parts for seed in part["seeds"]})
    return data


def overlay_page(results_dir, sweeps: list[str], metric: str = METRIC) -> str:
    """The page overlaying `sweeps` (each once, in the order given); AnalysisError for fewer than two, more than
    MAX_SWEEPS, an unknown sweep or one with no finished run."""
    from matplotlib.colors import to_hex

    from analysis.explore.json_data import script_json
    from analysis.explore.payload import computed_figures, figure_data
    from analysis.explore.plotly_js import plotly_js
    from analysis.plots import make_context
    from analysis.plots.base import arm_colors
    from analysis.reading.frames import load_sweep
    from analysis.report.page import static

    sweeps = list(dict.fromkeys(sweeps))
    if not 2 <= len(sweeps) <= MAX_SWEEPS:
        raise AnalysisError(f"choose 2 to {MAX_SWEEPS} sweeps to overlay (got {len(sweeps)}).")
    parts, contexts, lr_sql, curves_sql = [], [], list[str](), list[str]()
    for sweep in sweeps:
        contexts.append(make_context(load_sweep(results_dir, sweep), metric))
        part, lrs, curves = figure_data(contexts[-1])
        parts.append((sweep, part))
        lr_sql, curves_sql = lr_sql + lrs, curves_sql + curves
    names = [arm["name"] for _, part in parts for arm in part["arms"]]
    colors = {arm: to_hex(color) for arm, color in arm_colors(list(dict.fromkeys(names)), names[0]).items()}
    data = _merged(parts, colors)
    figures = computed_figures(contexts[0], lr_sql, curves_sql)
    dashes = ", ".join(f"{escape(sweep)} {DASHES[i]}" for i, sweep in enumerate(sweeps))
    pages = ", ".join(f'<a href="/sweep/{quote(sweep)}">{escape(sweep)}</a>' for sweep in sweeps)
    body = (f"{crumbs(f'overlay of {pages}')}<h1>Overlay: {escape(', '.join(sweeps))}</h1>"
            f'<p class="note">Each arm of each sweep in the same figures: one colour per arm name, one dash per sweep '
            f"({dashes}). The filter bar acts on every sweep; a click on a run opens its page.</p>"
            f"{FILTER_BAR}{''.join(figure_box(figure, True) for figure in figures)}"
            f'<script id="harness-data" type="application/json">{script_json(data)}</script>'
            f"<script>{plotly_js()}</script><script>{static('run.js')}</script><script>{static('explore.js')}</script>")
    return shell(f"overlay: {', '.join(sweeps)}", body)
