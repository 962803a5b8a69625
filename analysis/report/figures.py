"""The report's figures section: the filter bar, each figure's box (title, plot, caption, SQL), the panel that
opens one run, and the scripts that draw them (plotly.js and `static/explore.js`, inlined)."""

from __future__ import annotations

from html import escape

from analysis.explore.fixed import Figure
from analysis.explore.json_data import script_json
from analysis.explore.plotly_js import plotly_js
from analysis.report.html import sql_block

EMPTY = {"attention": "no attention logits logged", "logits": "no output-logit probes logged",
         "spikes": "no loss or grad-norm spike and no divergence", "compute": "no validation loss with tokens and step times logged"}


def _box(figure: Figure, drawn: bool) -> str:
    plot = (f'<div class="plot" id="plot-{figure.name}"></div>' if drawn else
            f'<p class="empty">Nothing to draw: {escape(EMPTY.get(figure.name, "no data"))}.</p>')
    return (f'<figure id="fig-{figure.name}"><h3>{escape(figure.title)}</h3>{plot}'
            f"<figcaption>{escape(figure.caption)}</figcaption>{sql_block(figure.sql)}</figure>")


def section(figures: list[Figure]) -> list[str]:
    """The figures' HTML: the filter bar (filled by the script), every figure, the run panel."""
    boxes = [_box(figure, figure.plotly is not None or figure.name in ("lr", "curves")) for figure in figures]
    bar = ('<div id="explore" class="controls"><noscript>The figures need JavaScript.</noscript></div>'
           '<p class="hint">Hover for values and run ids; drag to zoom (double-click resets); click a legend entry or '
           'an arm above to hide it in every figure, double-click to show it alone.</p>')
    detail = ('<section id="run-detail"><h3>One run</h3><p id="run-info">Click a run (a faint point in the LR figure, or '
              'a line of the loss curves with "show runs") to see its curves here.</p><div class="plot" id="plot-run"></div></section>')
    return [bar, *boxes, detail]


def scripts(data: dict) -> tuple[str, str]:
    """The page's data element and the scripts that draw the figures (run after the page's own script)."""
    from analysis.report.page import static

    return (f'<script id="harness-data" type="application/json">{script_json(data)}</script>',
            f"<script>{plotly_js()}</script><script>{static('explore.js')}</script>")
