"""The report's "Will it hold at scale?" section, for a ladder sweep: a sentence per arm on its extrapolated gap to
the baseline and where their curves cross, the fitted curves against compute (a figure) and against parameters,
and decision consistency, each table with its SQL (`analysis.ladder`)."""

from __future__ import annotations

from html import escape

import numpy as np

from analysis.ladder.extrapolate import extrapolate, resolve_target
from analysis.report.html import missing, sql_block, table

FIT_COLUMNS = ["arm", "rungs", "seeds", "diverged", "best_lrs", "E", "E 95%", "alpha", "alpha 95%", "A", "A 95%",
               "predicted", "predicted 95%", "gap", "gap 95%", "crossover", "crossover 95%", "crosses", "note"]
CAPTION = ("Each point is a run at its rung's best LR; each line an arm's fitted L = E + A·C^-α (Huber loss in log "
           "space) from its first rung to the target (dotted); the band is its 95% bootstrap interval over seeds. "
           "Hover for values.")


def _g(value, digits: int = 3) -> str:
    return "?" if missing(value) else f"{float(value):.{digits}g}"


def _share(value) -> str:
    return "?" if missing(value) else f"{value:.0%}"


def _interval(low, high) -> str:
    return "" if missing(low) or missing(high) else f"[{_g(low)}, {_g(high)}]"


def fits_frame(frame):
    """An extrapolation table as shown: each value with its interval beside it, `crosses` as a share."""
    shown = frame.assign(**{f"{name} 95%": [_interval(lo, hi) for lo, hi in zip(frame[low], frame[high])]
                            for name, low, high in (("E", "E_low", "E_high"), ("alpha", "alpha_low", "alpha_high"),
                                                    ("A", "A_low", "A_high"), ("predicted", "low", "high"),
                                                    ("gap", "gap_low", "gap_high"),
                                                    ("crossover", "cross_low", "cross_high"))})
    shown["crosses"] = ["" if missing(share) else _share(share) for share in frame["crosses"]]
    return shown[FIT_COLUMNS]


def _fits(frame) -> str:
    return f'<div class="scroll sticky-first">{table(fits_frame(frame))}</div>'


def gap_sentence(row, baseline: str, target: str, unit: str) -> str:
    """One arm's fitted gap to the baseline at the target, with its interval and crossover, or why there is none."""
    arm = f"<b>{escape(row['arm'])}</b>"
    if missing(row["gap"]):
        note = row["note"] or "its curve or the baseline’s is not fitted"
        said = note if note.startswith("no extrapolation") else f"no extrapolation: {note}"
        return f"<li>{arm}: {escape(said)}.</li>"
    resolved = row["gap_high"] < 0 or row["gap_low"] > 0
    side = "better" if row["gap"] < 0 else "worse"
    verdict = (f"predicted <b>{_g(abs(row['gap']))} nats {side}</b> than {escape(baseline)}" if resolved else
               f"predicted {_g(row['gap'])} nats from {escape(baseline)}, <b>not resolved</b>")
    cross = (f"their fitted curves cross at {_g(row['crossover'])} {unit} (95% "
             f"{_interval(row['cross_low'], row['cross_high'])}; {_share(row['crosses'])} of bootstrap fits cross "
             "before the target)" if not missing(row["crossover"]) else
             f"their fitted curves do not cross from the first rung to the target ({_share(row['crosses'])} of "
             "bootstrap fits do)")
    return f"<li>{arm} at {escape(target)}: {verdict} (95% {_interval(row['gap_low'], row['gap_high'])}); {cross}.</li>"


def _consistency(ladder) -> str:
    frame = ladder.consistency
    if frame.empty:
        return "<p>One rung only: nothing to check a decision against.</p>"
    if ladder.decided == 0:
        lead = ("The largest rung resolves the order of no pair of arms, so there is no decision to be consistent with "
                "yet.")
    else:
        shares = ", ".join(f"{escape(rung)}: {'?' if np.isnan(share) else f'{share:.0%}'}"
                           for rung, share in zip(frame["rung"], frame["share"]))
        lead = (f"Of the {ladder.decided} pair{'s' if ladder.decided != 1 else ''} of arms whose order the largest "
                f"rung resolves, the share each smaller rung orders the same way: {shares}.")
    return (f"<h3>Decision consistency</h3><p>{lead} DataDecide (Magnusson et al., 2025) measured about 80% for a "
            "single 150M rung predicting 1B, and found no scaling-law fit beat ranking at one scale for the compute "
            "spent.</p>"
            f'<div class="scroll">{table(frame)}</div>')


def section(analysis) -> str:
    """The section's HTML, or "" when the sweep is not a ladder."""
    ladder = analysis.ladder
    if ladder is None:
        return ""
    target, unit = ladder.target.describe(), "FLOPs"
    rows = ladder.table.to_dict("records")
    sentences = "".join(gap_sentence(row, rows[0]["arm"], target, unit) for row in rows[1:])
    method = ("<p class=\"note\">Per arm, the loss at each rung's best LR against training compute, fitted with L = E "
              "+ A·C^-α by a Huber loss in log space; intervals from a seed bootstrap (seeds redrawn at each rung, the "
              "same draw for every arm, deviations inflated for the few seeds, percentiles widened by t/z), 95%. A fit "
              "needs three rungs and says when it does not converge; an extrapolation needs four, and none is made "
              "from a degenerate fit (a parameter at its bound, or bootstrap fits that disagree wildly): the note says "
              "why. Extrapolations are hypotheses for the next rung, not measurements.</p>")
    size = resolve_target(ladder.data, "params", None)
    by_size = extrapolate(ladder.fits["params"], size)
    return (f'<h2 id="ladder">Will it hold at scale?</h2><ul class="headlines">{sentences}</ul>{method}'
            '<figure id="fig-ladder"><h3>Loss against compute, fitted and extrapolated</h3><div class="plot" '
            'id="plot-ladder"></div>'
            f"<figcaption>{escape(CAPTION)}</figcaption></figure>"
            f"<h3>Fits against training compute, extrapolated to {escape(target)}</h3>{_fits(ladder.table)}"
            f"<h3>Fits against parameters, extrapolated to {escape(size.describe())}</h3>{_fits(by_size)}"
            f"{_consistency(ladder)}{_decisions(analysis)}{sql_block(ladder.sql)}")


def _decisions(analysis) -> str:
    """Decision accuracy from every run of the sweep, divergences included (`harness decisions SWEEP`), as a figure."""
    from analysis.explore.decisions import decisions_html
    from analysis.ladder.decision_runs import sweep_runs
    from analysis.ladder.decisions import decision_accuracy

    runs = sweep_runs(analysis.sweep, analysis.metric, analysis.baseline)
    return decisions_html(decision_accuracy(runs, min_effect=analysis.min_effect))
