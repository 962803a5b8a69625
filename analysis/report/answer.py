"""The report's first section: the answer, one sentence per arm, and the compact per-arm table under it.

Every number in a sentence is in the tables below it; the sentences only say which of them answers the
question, and, where nothing is resolved yet, how many more seeds would resolve what was observed.
"""

from __future__ import annotations

from html import escape

from analysis.headline import Headline, winner
from analysis.report.html import missing, table
from analysis.stats import ALPHA


def _g(value, digits: int = 3) -> str:
    return "?" if missing(value) else f"{float(value):.{digits}g}"


def _lr(lr) -> str:
    return "its searched LR" if missing(lr) else f"LR {_g(lr)}"


def _seeds(count: int | None) -> str:
    return "more than 10,000" if count is not None and count >= 10_000 else f"{count:,}"


def _difference(row: dict) -> str:
    return (f"{_g(row['delta'], 3)} nats [{_g(row['delta_ci_low'])}, {_g(row['delta_ci_high'])}] over "
            f"{row['n']} matched seed{'s' if row['n'] != 1 else ''}, Holm p {_g(row['p_holm'], 2)}")


def _plans(line: Headline, min_effect: float) -> str:
    """Both seed plans, each labelled with the difference it is for."""
    row, parts = line.row, []
    if line.seeds_for_observed is not None:
        parts.append(f"to resolve the observed difference: {_seeds(line.seeds_for_observed)} matched seeds")
    if row["seeds_needed"] is not None:
        parts.append(f"to resolve ±{min_effect:g} nats: {_seeds(row['seeds_needed'])}")
    return f" Seeds needed {'; '.join(parts)}." if parts else ""


def _unresolved(line: Headline, min_effect: float) -> str:
    row = line.row
    if row["verdict"] == "no CI":
        return (f"<b>not resolved</b>: {row['n'] or 0} matched seed{'s' if row['n'] != 1 else ''} completed on both "
                "sides, too few for an interval (a spread needs two pairs, and zero spread three); run more seeds.")
    more = line.more_seeds
    ask = (f"{_seeds(more)} more seeds would resolve the observed difference" if more else
           "the observed difference should resolve at this seed count, but did not")
    return f"<b>not resolved</b> ({_difference(row)}): {ask}.{_plans(line, min_effect)}"


def _verdict(line: Headline, baseline: str, min_effect: float) -> str:
    row, verdict = line.row, line.row["verdict"]
    if verdict in ("more stable", "less stable"):
        return (f"<b>{verdict}</b>: diverged on {row['arm_diverged']} of {row['n_pairs']} matched seeds, {escape(baseline)} "
                f"on {row['baseline_diverged']} (Fisher's exact test, Holm p {_g(row['p_stability_holm'], 2)}).")
    if verdict == "negligible":
        return f"<b>negligible</b>: {_difference(row)}, inside ±{min_effect:g} nats.{_plans(line, min_effect)}"
    if verdict in ("better", "worse"):
        return f"<b>{verdict}</b>: {_difference(row)}.{_plans(line, min_effect)}"
    return _unresolved(line, min_effect)


def _sentence(line: Headline, analysis) -> str:
    shown, baseline = analysis.sweep.shown, analysis.sweep.shown(analysis.baseline)
    survivors = " Conditional on survival: some matched seeds diverged." if line.row.get("survivors_only") else ""
    return (f'<li data-arm="{escape(line.arm)}" data-verdict="{escape(line.row["verdict"])}"><b>{escape(shown(line.arm))}</b> '
            f"at {_lr(line.lr)} against {escape(baseline)} at {_lr(line.baseline_lr)}: "
            f"{_verdict(line, baseline, analysis.min_effect)}{survivors}</li>")


def _lead(analysis) -> str:
    best, baseline = winner(analysis.headlines), escape(analysis.sweep.shown(analysis.baseline))
    if best is not None:
        return (f"<b>{escape(analysis.sweep.shown(best.arm))}</b> wins: {_g(best.row['delta'])} nats against {baseline}, "
                f"each at its best LR (95% CI [{_g(best.row['delta_ci_low'])}, {_g(best.row['delta_ci_high'])}]).")
    if not analysis.headlines:
        return f"Only {baseline} has finished runs: nothing to compare yet."
    counts = {}
    for line in analysis.headlines:
        counts[line.row["verdict"]] = counts.get(line.row["verdict"], 0) + 1
    tally = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    return f"No arm is resolved better than {baseline} at its best LR ({tally})."


def answer(analysis) -> str:
    """The headline section: the lead sentence, a sentence per arm, the compact per-arm table."""
    items = "".join(_sentence(line, analysis) for line in analysis.headlines)
    method = (f"Each arm at its own best LR (lowest mean loss, a divergence counted as the loss at step 0) against "
              f"the baseline at its own best LR, paired on seed; paired t-test, Holm-adjusted across these rows, "
              f"α = {ALPHA:g}; seeds planned for 80% power from the 90% upper bound of the paired spread.")
    return (f'<section class="answer" id="answer"><h2>Answer</h2><p class="lead">{_lead(analysis)}</p>'
            f'<ul class="headlines">{items}</ul><p class="note">{method}</p>'
            f'<h3>Per arm</h3><div class="scroll sticky-first" id="compact">{table(compact_frame(analysis), labelled=("verdict",))}</div>'
            f"</section>")


def compact_frame(analysis):
    """The compact per-arm table as shown: arm labels, the difference and its interval in one column."""
    frame = analysis.compact()
    ci = [("" if missing(low) else f"[{_g(low)}, {_g(high)}]") for low, high in zip(frame["delta_ci_low"], frame["delta_ci_high"])]
    shown = frame.assign(arm=frame["arm"].map(analysis.sweep.shown), delta_ci=ci,
                         diverged=[f"{d} of {r}" if not missing(r) else "" for d, r in zip(frame["diverged"], frame["runs"])])
    shown = shown.rename(columns={"delta": "Δ at best LRs", "delta_ci": "95% CI", "n": "seeds", "diverged": "diverged runs"})
    return shown[["arm", "verdict", "Δ at best LRs", "95% CI", "seeds", "best_lr", "lr_sensitivity", "diverged runs", "peak_attn_logit"]]
