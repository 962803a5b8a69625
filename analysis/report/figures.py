"""The report's figures section: the filter bar, each figure's box (title, plot, caption, SQL), the panel that
opens one run, and the scripts that draw them (plotly.js and `static/explore.js`, inlined)."""

from __future__ import annotations

from html import escape
from typing import Sequence

from analysis.explore.fixed import Figure
from analysis.explore.json_data import script_json
from analysis.explore.plotly_js import plotly_js
from analysis.report.html import sql_block

EMPTY = {"attention": "no attention logits logged", "logits": "no output-logit probes logged",
         "spikes": "no loss or grad-norm spike and no divergence",
         "compute": "no validation loss with tokens and step times logged"}


def figure_box(figure: Figure, drawn: bool) -> str:
    """One figure: its title, its plot (or the line saying why there is none), caption and SQL."""
    plot = (f'<div class="plot" id="plot-{figure.name}"></div>' if drawn else
            f'<p class="empty">Nothing to draw: {escape(EMPTY.get(figure.name, "no data"))}.</p>')
    return (f'<figure id="fig-{figure.name}"><h3>{escape(figure.title)}</h3>{plot}'
            f"<figcaption>{escape(figure.caption)}</figcaption>{sql_block(figure.sql)}</figure>")


FILTER_BAR = ('<div id="explore" class="controls"><noscript>The figures need JavaScript.</noscript></div>'
              '<p class="hint">Hover for values and run ids; drag to zoom (double-click resets); click a legend '
              "entry or an arm above to hide it in every figure, double-click to show it alone; click a run (a faint "
              'point of the LR figure, a line with "show runs", a spike) or a run id in a table to open everything it '
              "recorded.</p>")


def run_panel(sql: Sequence[str] = (), hidden: bool = True, back: str = "#") -> str:
    """The one-run view's section (filled by static/run.js): a link back, the run's facts, a panel per signal, and
    the SQL its data came from."""
    folds = sql_block(list(sql))
    return (f'<section id="run-detail" class="run"{" hidden" if hidden else ""}><p class="crumbs">'
            f'<a class="run-back" href="{escape(back)}">← back to the sweep</a> '
            '<a id="run-page" hidden>open on its own page</a>'
            '</p><h3 class="run-title">One run</h3><div class="run-facts"></div><div class="run-panels"></div>'
            f"{folds}</section>")


def section(figures: list[Figure], run_sql: Sequence[str] = ()) -> list[str]:
    """The figures' HTML: the filter bar (filled by the script), every figure, the one-run panel."""
    boxes = [figure_box(figure, figure.plotly is not None or figure.name in ("lr", "curves")) for figure in figures]
    return [FILTER_BAR, *boxes, run_panel(run_sql)]


def scripts(data: dict) -> tuple[str, str]:
    """The page's data element and the scripts that draw the figures (run after the page's own script)."""
    from analysis.report.page import static

    return (f'<script id="harness-data" type="application/json">{script_json(data)}</script>',
            f"<script>{plotly_js()}</script><script>{static('run.js')}</script><script>{static('explore.js')}</script>")
