"""The report page: one self-contained HTML file (styles, script and figures inline; no network).

While the sweep runs the page reloads itself every `REFRESH_SECONDS` and says how far the sweep got; a
finished sweep's page has no refresh.
"""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape

from analysis.report.html import sql_block, table
from analysis.source import SweepInfo
from analysis.stats import ALPHA

REFRESH_SECONDS = 10

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 78rem; padding: 0 1rem; color: #222; }
h1 { margin-bottom: .2rem; } .question { font-size: 1.15rem; margin-top: 0; }
.status { display: inline-block; padding: .2rem .6rem; border-radius: .3rem; background: #e8f4e8; }
.status.running { background: #fff3cd; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .6rem 0; font-variant-numeric: tabular-nums; }
th, td { padding: .25rem .55rem; border-bottom: 1px solid #ddd; text-align: right; }
th { cursor: pointer; background: #f4f4f4; position: sticky; top: 0; }
td:first-child, th:first-child { text-align: left; }
td[data-verdict="better"] { color: #11661f; font-weight: 600; } td[data-verdict="worse"] { color: #a11; font-weight: 600; }
figure { margin: 1.5rem 0; } figure img { max-width: 100%; } figcaption { color: #555; max-width: 60rem; }
pre { background: #f7f7f7; padding: .6rem; overflow-x: auto; font-size: 12px; }
.flag { color: #a11; font-weight: 600; }
"""

# Click a header to sort by it; a second click reverses. Cells carry data-sort (numbers or text; empty last).
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var ascending = th.dataset.order !== "asc";
      th.dataset.order = ascending ? "asc" : "desc";
      rows.sort(function (a, b) {
        var x = a.cells[column].dataset.sort, y = b.cells[column].dataset.sort;
        if (x === "" || y === "") return (x === "") - (y === "");
        var nx = parseFloat(x), ny = parseFloat(y);
        var order = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""

def _status(info: SweepInfo) -> str:
    if info.running:
        return f'<p class="status running">{escape(info.progress())}: this page reloads every {REFRESH_SECONDS} s while the sweep runs.</p>'
    return f'<p class="status">{escape(info.progress())}: finished.</p>'


def _head(info: SweepInfo) -> str:
    refresh = f'<meta http-equiv="refresh" content="{REFRESH_SECONDS}">' if info.running else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">{refresh}'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>harness report: {escape(info.name)}</title><style>{STYLE}</style></head><body>"
    )


def _intro(info: SweepInfo) -> str:
    question = escape(info.question) if info.question else "No question recorded: these runs were written without a sweep plan."
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return (
        f"<h1>Sweep {escape(info.name)}</h1><p class=\"question\">{question}</p>{_status(info)}"
        f"<p>Generated {generated} by <code>harness report {escape(info.name)}</code>.</p>"
    )


def _method(analysis) -> str:
    return (
        f"<p>Metric <code>{escape(analysis.metric)}</code>, lower is better; baseline arm "
        f"<b>{escape(analysis.baseline)}</b>. A run that diverged, or completed with a non-finite metric, is a "
        "divergence: counted, never averaged in. Each arm is paired with the baseline at the same LR on matched seeds "
        "(same seed, same data order): <i>n_pairs</i> seeds both have, the divergences of each side on them and "
        "Fisher's exact test of the two divergence rates (<i>p_stability</i>), and the paired t-test of the loss on "
        "the <i>n</i> seeds both completed (<i>survivors_only</i> when some matched seed diverged); every p-value of "
        f"the table is in one Holm family. Verdict: <i>less stable</i> / <i>more stable</i> when the adjusted divergence "
        f"p &lt; {ALPHA:g}; <i>no CI</i> under two surviving pairs (or zero spread from under three); <i>negligible</i> "
        f"when both diverged as often and the difference's CI lies inside ±{analysis.min_effect:g} nats; <i>better</i> or "
        f"<i>worse</i> when the adjusted loss p &lt; {ALPHA:g} and the side it favours diverged no more often (the survivors "
        "of the side that diverged more are a selection); else <i>within noise</i>. <i>seeds_needed</i>: matched "
        f"seeds for 80% power to resolve {analysis.min_effect:g} nats, planned with the 90% upper confidence bound of "
        "the paired spread. LR sensitivity (Wortsman et al. 2023, §2.2): mean over the LR grid of min(ℓ(η), ℓ₀) − ℓ*, "
        "a divergence counted as ℓ₀, the loss at step 0.</p>"
    )


def _summary(analysis) -> str:
    rendered = table(analysis.table(), labelled=("verdict",))
    return f'<h2>Summary</h2><div class="scroll">{rendered}</div>{sql_block(analysis.sql)}'


def _scale(analysis) -> str:
    if analysis.scale is None:
        return ""
    scale = analysis.scale
    method = (
        "<p>Each variant at its best LR at each scale (the argmin of ℓ(η), a divergence counted as ℓ₀, as in the LR "
        "sensitivity). A reversal is flagged only where a pair's order is resolved (paired t-test on matched seeds, "
        f"p &lt; {ALPHA:g}) in opposite directions at two scales, Holm-adjusted across every candidate.</p>"
    )
    flags = "".join(f'<li class="flag">Ranking reverses: {escape(text)}.</li>' for text in scale.reversals)
    verdict = f"<ul>{flags}</ul>" if flags else f"<p>No resolved reversal across {escape(scale.axis)}.</p>"
    return f"<h2>Across scales</h2>{method}{verdict}{table(scale.table)}{sql_block(scale.sql)}"


def render(info: SweepInfo, analysis=None, figures: list[str] = ()) -> str:
    """The whole page; with no analysis (nothing finished yet) just the sweep's progress."""
    parts = [_head(info), _intro(info)]
    if analysis is None:
        parts.append("<p>No cell has finished yet: results appear here as cells finish.</p>")
    else:
        parts += [_method(analysis), _summary(analysis), _scale(analysis), "<h2>Figures</h2>", *figures]
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "".join(parts)
