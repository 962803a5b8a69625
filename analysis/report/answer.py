"""The report's first section: the answer, one sentence per arm, and the compact per-arm table under it.

Every number in a sentence is in the tables below it; the sentences only say which of them answers the
question, and, where nothing is resolved yet, how many more seeds would resolve what was observed.
"""

from __future__ import annotations

from html import escape

from analysis.comparison.headline import ANYTIME, Headline, winner
from analysis.comparison.row import ComparisonRow
from analysis.comparison.rules import Verdict, barred, sentence
from analysis.comparison.stats import ALPHA
from analysis.report.html import missing, table
from analysis.report.ladder import gap_sentence
from analysis.signals.primary import ArmSignal


def _g(value, digits: int = 3) -> str:
    return "?" if missing(value) else f"{float(value):.{digits}g}"


def _lr(lr) -> str:
    return "its searched LR" if missing(lr) else f"LR {_g(lr)}"


def _seeds(count: int | None) -> str:
    return "more than 10,000" if count is not None and count >= 10_000 else f"{count:,}"


def _difference(row: ComparisonRow) -> str:
    interval = "95% confidence sequence" if row.get("test") == ANYTIME else "95% CI"
    return (f"{_g(row['delta'], 3)} nats ({interval} [{_g(row['delta_ci_low'])}, {_g(row['delta_ci_high'])}]) over "
            f"{row['n']} matched seed{'s' if row['n'] != 1 else ''}")


def _plans(line: Headline, min_effect: float) -> str:
    """Both seed plans, each labelled with the difference it is for (fixed-n plans: none after adaptive seeding)."""
    row, parts = line.row, []
    if line.anytime:
        return ""
    if line.seeds_for_observed is not None:
        parts.append(f"to resolve the observed difference: {_seeds(line.seeds_for_observed)} matched seeds")
    if row["seeds_needed"] is not None:
        parts.append(f"to resolve ±{min_effect:g} nats: {_seeds(row['seeds_needed'])}")
    return f" Seeds needed {'; '.join(parts)}." if parts else ""


def _unresolved(line: Headline, min_effect: float) -> str:
    row = line.row
    if line.anytime:
        return (f"<b>undecided</b> ({_difference(row)}): the anytime-valid test has not decided; add seeds "
                "(--until-decided).")
    more = line.more_seeds
    ask = (f"{_seeds(more)} more seeds would resolve the observed difference" if more else
           "the observed difference should resolve at this seed count, but did not")
    why = barred(row)
    reason = f"; {escape(why)}" if why else ""
    return f"<b>not resolved</b> ({_difference(row)}{reason}): {ask}.{_plans(line, min_effect)}"


def _verdict(line: Headline, baseline: str, min_effect: float) -> str:
    row, verdict = line.row, line.row["verdict"]
    said = sentence(row, baseline, min_effect)
    if said is None:
        return _unresolved(line, min_effect)
    plans = _plans(line, min_effect) if verdict not in (Verdict.NO_CI,) else ""
    return f"<b>{escape(str(verdict))}</b>: {escape(said)}.{plans}"


def _sentence(line: Headline, analysis) -> str:
    shown, baseline = analysis.sweep.shown, analysis.sweep.shown(analysis.headline_baseline)
    survivors = " Conditional on survival: some matched seeds diverged." if line.row.get("survivors_only") else ""
    if bimodal := line.row.get("bimodal"):
        survivors += (f' <span class="warn">Per-seed losses split into two groups ({escape(bimodal)}): a '
                      "run escapes a plateau or not, and the mean describes neither.</span>")
    return (f'<li data-arm="{escape(line.arm)}" '
            f'data-verdict="{escape(line.row["verdict"])}"><b>{escape(shown(line.arm))}</b> '
            f"at {_lr(line.lr)} against {escape(baseline)} at {_lr(line.baseline_lr)}: "
            f"{_verdict(line, baseline, analysis.min_effect)}{survivors}</li>")


def _lead(analysis) -> str:
    best, baseline = winner(analysis.headlines), escape(analysis.sweep.shown(analysis.headline_baseline))
    if analysis.headline_rung is not None:
        return f"At the largest rung ({escape(analysis.headline_rung)}): {_lead_at(best, baseline, analysis)}"
    return _lead_at(best, baseline, analysis)


def _lead_at(best, baseline: str, analysis) -> str:
    if best is not None:
        interval = "95% confidence sequence" if best.anytime else "95% CI"
        return (f"<b>{escape(analysis.sweep.shown(best.arm))}</b> wins: {_g(best.row['delta'])} nats against "
                f"{baseline}, each at its best LR ({interval} [{_g(best.row['delta_ci_low'])}, "
                f"{_g(best.row['delta_ci_high'])}]; {escape(best.row.get('decided_by') or '')}).")
    if not analysis.headlines:
        return f"Only {baseline} has finished runs: nothing to compare yet."
    counts: dict[str, int] = {}
    for line in analysis.headlines:
        counts[line.row["verdict"]] = counts.get(line.row["verdict"], 0) + 1
    tally = ", ".join(f"{n} {verdict}" for verdict, n in counts.items())
    return f"No arm is resolved better than {baseline} at its best LR ({tally})."


def _signal_value(signal, value: ArmSignal) -> str:
    if signal.name == "divergence":
        at = f" (at LR {_g(value.lr)}: {int(value.low)} of {int(value.high)})" if value.lr is not None else ""
        return f"diverged on {int(value.value)} of {value.runs} runs{at}"
    if signal.name == "lr_sensitivity":
        return f"{_g(value.value)} nats (best LR {_g(value.lr)})"
    spread = f" [{_g(value.low)}–{_g(value.high)}]" if value.runs > 1 else ""
    cap = (f" (before its soft-cap at {_g(value.pre_cap)}: softmax sees at most {_g(value.pre_cap)})"
           if value.pre_cap is not None else "")
    return f"{_g(value.value)}{spread}{cap}"


def signal_section(analysis) -> str:
    """The question's own signal per arm, ahead of the loss: what a stability question is answered by."""
    signal = analysis.signal
    if signal is None:
        return ""
    where = {"attn_logit": "max over layers, heads and probe steps, each arm at its largest LR; median over seeds "
                           "[range]", "divergence": "over every LR", "lr_sensitivity": "Wortsman et al.'s measure"}
    items = "".join(f'<li data-arm="{escape(value.arm)}"><b>{escape(analysis.sweep.shown(value.arm))}</b>: '
                    f"{escape(_signal_value(signal, value))}</li>" for value in signal.arms)
    return (f'<p class="lead signal">This question is about <b>{escape(signal.label)}</b> ({where[signal.name]}):</p>'
            f'<ul class="signal">{items}</ul><p>On the loss, each arm at its best LR:</p>')


def target_section(analysis) -> str:
    """A ladder's answer at the target: each arm's fitted gap to the baseline there, or why there is none."""
    ladder = analysis.ladder
    if ladder is None:
        return ""
    rows = ladder.table.to_dict("records")
    items = "".join(gap_sentence(row, rows[0]["arm"], ladder.target.describe(), "FLOPs") for row in rows[1:])
    return (f"<p>At the target, {escape(ladder.target.describe())}, from each arm's fitted curve (a hypothesis for the "
            'next rung, not a measurement; <a href="#ladder">Will it hold at scale?</a>):</p><ul '
            f'class="headlines">{items}</ul>')


def _anytime(analysis) -> bool:
    return any(line.anytime for line in analysis.headlines)


def answer(analysis) -> str:
    """The headline section: the lead sentence, a sentence per arm, the compact per-arm table."""
    items = "".join(_sentence(line, analysis) for line in analysis.headlines)
    method = (f"Each arm at its own best LR (lowest mean loss, a divergence counted as the loss at step 0) against "
              f"the baseline at its own best LR, paired on seed, judged by the verdict rules below, α = {ALPHA:g}. "
              + (f"{escape(analysis.sweep.info.adaptive)}, so every row is judged by the anytime-valid test alone "
                 "(t confidence sequence and divergence e-process, Holm across the table at every seed); no fixed-n "
                 "p-value is quoted." if _anytime(analysis) else
                 "Paired t-test and Fisher's exact test of divergences, Holm-adjusted across these rows; seeds planned "
                 "for 80% power from the 90% upper bound of the paired spread."))
    return (f'<section class="answer" id="answer"><h2>Answer</h2>{signal_section(analysis)}<p '
            f'class="lead">{_lead(analysis)}</p><ul class="headlines">{items}</ul>{target_section(analysis)}<p '
            f'class="note">{method}</p><h3>Per arm</h3><div class="scroll sticky-first" '
            f'id="compact">{table(compact_frame(analysis), labelled=("verdict",))}</div>'
            f"</section>")


def compact_frame(analysis):
    """The compact per-arm table as shown: arm labels, the difference and its interval in one column."""
    frame = analysis.compact()
    ci = [("" if missing(low) else f"[{_g(low)}, {_g(high)}]")
          for low, high in zip(frame["delta_ci_low"], frame["delta_ci_high"])]
    shown = frame.assign(arm=frame["arm"].map(analysis.sweep.shown), delta_ci=ci,
                         diverged=[f"{d} of {r}" if not missing(r) else ""
                                   for d, r in zip(frame["diverged"], frame["runs"])])
    caps = analysis.soft_caps
    shown["peak_attn_logit"] = [("" if missing(peak) else f"{_g(peak)} (pre-cap)" if arm in caps else _g(peak))
                                for arm, peak in zip(frame["arm"], frame["peak_attn_logit"])]
    names = {"delta": "Δ at best LRs", "delta_ci": "95% CI", "n": "seeds", "diverged": "diverged runs"}
    order = [names.get(c, c) for c in analysis.compact_columns if c not in ("delta_ci_low", "delta_ci_high", "runs")]
    order.insert(order.index("Δ at best LRs") + 1, "95% CI")
    return shown.rename(columns=names)[order]
