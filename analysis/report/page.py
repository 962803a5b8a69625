"""The report page: one self-contained HTML file (styles, scripts and figures inline; no network).

It leads with the answer (`analysis.report.answer`), then the per-(arm, LR) table, the comparison across
scales, a ladder's "Will it hold at scale?" (`analysis.report.ladder`), the figures and how the numbers were computed.
While the sweep runs the page reloads itself every `REFRESH_SECONDS` (a pause button, and exploring a figure, stop
that); a finished sweep's page, and an interrupted one's (nothing rewrites it until the sweep is resumed), do not
reload.
"""

from __future__ import annotations

from datetime import datetime, timezone
from html import escape
from importlib import resources
from typing import Sequence

import pandas as pd

from analysis.comparison.rules import OTHERWISE, OTHERWISE_CONDITION, RULES
from analysis.comparison.stats import ALPHA
from analysis.comparison.table import OBSERVED
from analysis.reading.source import FINISHED, INTERRUPTED_STATE, RUNNING_STATE, SweepInfo
from analysis.report.answer import answer
from analysis.report.html import missing, run_link, sql_block, table
from analysis.report.ladder import section as ladder_section
from db.provenance import finished_code_summary

REFRESH_SECONDS = 10


def static(name: str) -> str:
    """The text of one of the page's style sheets or scripts (analysis/report/static/)."""
    return resources.files("analysis.report").joinpath("static", name).read_text(encoding="utf-8")


def _status(info: SweepInfo) -> str:
    progress = escape(info.progress())
    if info.state == RUNNING_STATE:
        return (f'<p class="status running">{progress}: <span id="reload-state">this page reloads every '
                f'{REFRESH_SECONDS} s while the sweep runs</span>.<button id="reload-toggle" type="button">pause '
                'reloading</button></p>')
    if info.state == INTERRUPTED_STATE:
        stopped = f"{info.resumable} interrupted or crashed, " if info.resumable else ""
        return (f'<p class="status interrupted">Interrupted: {progress} ({stopped}{info.counts.get("pending", 0)} '
                'waiting in all); '
                "no worker is running it. Run the same <code>harness sweep</code> command to resume; this page no "
                "longer reloads.</p>")
    return f'<p class="status">{progress}: finished.</p>'


def _head(info: SweepInfo, index: str | None) -> str:
    reload = f' data-reload="{REFRESH_SECONDS}"' if info.state == RUNNING_STATE else ""
    served = f' data-index="{escape(index)}"' if index else ""
    crumbs = f'<p class="crumbs"><a href="{escape(index)}">all sweeps</a></p>' if index else ""
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>harness report: {escape(info.name)}</title><style>{static('report.css')}</style></head>"
        f"<body{reload}{served}>"
        f"{crumbs}"
    )


def _intro(info: SweepInfo) -> str:
    question = escape(info.question) if info.question else ("No question recorded: these runs were written without a "
                                                            "sweep plan.")
    generated = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return (
        f"<h1>Sweep {escape(info.name)}</h1><p class=\"question\">{question}</p>{_status(info)}"
        f"<p>Generated {generated} by <code>harness report {escape(info.name)}</code>.</p>"
    )


def rules_html() -> str:
    """The verdict rule table (`analysis.comparison.rules.RULES`, the one the CLI and docs render)."""
    rows: list[tuple[int, str, str]] = [(i, rule.verdict, rule.condition) for i, rule in enumerate(RULES, 1)]
    rows.append((len(RULES) + 1, f"{OTHERWISE['fixed']} / {OTHERWISE['sequential']}", OTHERWISE_CONDITION))
    body = "".join(f"<tr><td>{i}</td><td><i>{escape(str(verdict))}</i></td><td>{escape(when)}</td></tr>"
                   for i, verdict, when in rows)
    return ('<table '
            f'class="rules"><thead><tr><th>order</th><th>verdict</th><th>when</th></tr></thead><tbody>{body}</tbody></table>')


def _code(analysis) -> str:
    """Which code made the finished runs, mixed versions named with their counts (db.provenance)."""
    line = finished_code_summary(analysis.sweep.con, "sweep_runs")
    return f'<p class="code">{escape(line[0].upper() + line[1:])}.</p>' if line else ""


def _method(analysis) -> str:
    return (
        "<details class=\"method\"><summary>How these numbers were computed</summary>"
        f"<p>Metric <code>{escape(analysis.metric)}</code>, lower is better; baseline arm "
        f"<b>{escape(analysis.sweep.shown(analysis.baseline))}</b>. A run that diverged, or completed with a "
        "non-finite metric, is a divergence: counted, never averaged in. In the table by arm and LR each arm is paired "
        "with the baseline at the same LR on matched seeds (same seed, same data order): <i>n_pairs</i> seeds both "
        "have, the divergences of each side on them and Fisher's exact test of the two divergence rates "
        "(<i>p_stability</i>), and the paired t-test of the loss on the <i>n</i> seeds both completed "
        "(<i>survivors_only</i> when some matched seed diverged); every p-value of the table is in one Holm family. "
        "The verdict of a row is the first rule that holds (a loss claim in a side's favour is barred by any matched "
        f"seed where that side alone diverged: a divergence may hide any loss):</p>{rules_html()}<p>Seeds needed: "
        f"matched seeds for 80% power to resolve ±{analysis.min_effect:g} nats, and to resolve the observed "
        "difference, each planned with the 90% upper confidence bound of the paired spread. LR sensitivity (Wortsman "
        "et al. 2023, §2.2): mean over the LR grid of min(ℓ(η), ℓ₀) − ℓ*, a divergence counted as ℓ₀, the loss at step "
        "0.</p></details>"
    )


def _finished(analysis):
    """The sweep's finished runs (completed or diverged): what the one-run view holds."""
    runs = analysis.sweep.runs
    return runs[runs["status"].isin(FINISHED)].sort_values(["arm", "lr", "seed", "run_id"])


def _run_links(analysis, arm: str, lr) -> str:
    """Links to the finished runs of (arm, lr), each shown by its seed."""
    runs = _finished(analysis)
    here = runs[(runs["arm"] == arm) & ((runs["lr"] == lr) | (runs["lr"].isna() & missing(lr)))]
    return " ".join(run_link(run_id, str(seed)) for run_id, seed in zip(here["run_id"], here["seed"]))


def details_frame(analysis):
    """The per-(arm, LR) comparison as shown: arm labels, the two seed plans labelled by what they resolve, and the
    row's runs (links, by seed)."""
    comparison = analysis.comparison
    runs = [_run_links(analysis, arm, lr) for arm, lr in zip(comparison["arm"], comparison["lr"])]
    frame = comparison.assign(arm=comparison["arm"].map(analysis.sweep.shown), runs=runs)
    return frame.rename(columns={"seeds_needed": f"seeds_needed (±{analysis.min_effect:g})",
                                 OBSERVED: "seeds_needed (observed Δ)"})


def _details(analysis) -> str:
    rendered = table(details_frame(analysis), labelled=("verdict",), markup=("runs",))
    return (f'<h2>By arm and LR</h2><p>Each arm against the baseline at the same LR; a seed under <i>runs</i> opens '
            f'that run.</p><div class="scroll sticky-first" id="details">{rendered}</div>{sql_block(analysis.sql)}')


def runs_frame(analysis):
    """One row per finished run: its id (a link to the one-run view), arm, LR, seed, status, metric and divergence."""
    runs = _finished(analysis)
    metric = analysis.metric
    return pd.DataFrame({"run": [run_link(run_id) for run_id in runs["run_id"]],
                         "arm": runs["arm"].map(analysis.sweep.shown), "lr": runs["lr"], "seed": runs["seed"],
                         "status": runs["status"], metric: runs[metric],
                         "diverged_at_step": runs["diverged_at_step"].astype("Int64"),
                         "steps": (runs["last_step"] + 1).astype("Int64")})


def _runs(analysis) -> str:
    rendered = table(runs_frame(analysis), markup=("run",))
    count = len(_finished(analysis))
    return (f'<details class="runs" id="runs"><summary><h2>Runs ({count})</h2></summary><p>Every finished run; its id '
            f'opens everything it recorded.</p><div class="scroll sticky-first">{rendered}</div>'
            f"{sql_block([analysis.sweep.sql('SELECT * FROM sweep_runs ORDER BY arm, lr, seed, run_id')])}</details>")


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
    return (f'<h2>Across scales</h2>{method}{verdict}<div '
            f'class="scroll">{table(scale.table)}</div>{sql_block(scale.sql)}')


def render(info: SweepInfo, analysis=None, figures: Sequence[str] = (), scripts: Sequence[str] = (),
           index: str | None = None) -> str:
    """The whole page; with no analysis (nothing finished yet) just the sweep's progress. `scripts`: the
    figures' data and scripts (HTML, after the page's own script); `index`: where the dashboard serving the page has
    its index (a link back to it, and runs open on its run pages too), None for the report on its own."""
    parts = [_head(info, index), _intro(info)]
    if analysis is None:
        parts.append("<p>No cell has finished yet: results appear here as cells finish.</p>")
    else:
        parts += [_code(analysis), answer(analysis), _details(analysis), _runs(analysis), _scale(analysis),
                  ladder_section(analysis),
                  "<h2>Figures</h2>", *figures, _method(analysis)]
    parts += [f"<script>{static('report.js')}</script>", *scripts, "</body></html>"]
    return "".join(parts)
