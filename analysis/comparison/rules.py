"""The one outcome model behind every verdict: what each verdict means, in which order the rules apply, and the
sentence each says. The fixed-n table (`analysis.comparison.table`), the anytime-valid table
(`analysis.comparison.sequential_table`, behind `--sequential` and `--until-decided`), the report's headline, the CLI
(`harness compare --rules`) and docs/analysis.md all render `RULES`; tests/analysis/comparison/test_rules.py checks the
docs hold the same table.

**Divergence is an outcome, never missing data.** On the matched seeds (both sides have an outcome), a seed where
exactly one side diverged is a *discordant divergence*. The stability test counts them; the loss test compares the
seeds both completed. A loss claim in a side's favour must survive the worst case for it: each discordant
divergence *of the side it favours* is charged as a loss of unbounded size (a diverged run may have hidden any
loss, and a survivor set is a selection), so a single one bars the claim; the other side's discordant divergences
are left out of the loss test (the stability test credits them, and leaving them out can only weaken the claim).
So an arm that diverges more often, or exactly on the seeds where it would lose, is never `better`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Callable

import numpy as np

if TYPE_CHECKING:  # the row's module imports this one (Verdict)
    from analysis.comparison.row import ComparisonRow


class Verdict(StrEnum):
    """Every verdict a comparison row can carry; equal to its label string."""

    BASELINE = "baseline"
    LESS_STABLE = "less stable"
    MORE_STABLE = "more stable"
    NO_CI = "no CI"
    NEGLIGIBLE = "negligible"
    BETTER = "better"
    WORSE = "worse"
    WITHIN_NOISE = "within noise"  # the fixed-n table's "nothing resolved"
    UNDECIDED = "undecided"  # the anytime-valid table's "nothing decided yet"


RESOLVED = frozenset({Verdict.BETTER, Verdict.WORSE, Verdict.NEGLIGIBLE, Verdict.MORE_STABLE, Verdict.LESS_STABLE})


@dataclass(frozen=True)
class Evidence:
    """What one path's tests say about each row (arrays of one shape; a scalar row works too).

    `stability_resolved` / `loss_resolved`: the Holm-adjusted divergence / loss test rejects at α; `no_ci`: the loss
    test has no interval (too few surviving pairs); `inside_margin`: the loss interval lies inside ±min_effect;
    `direction`: the loss interval's side, −1 below 0 (the arm ahead), +1 above, 0 neither; `arm_only` /
    `baseline_only`: matched seeds where only that side diverged."""

    stability_resolved: np.ndarray
    loss_resolved: np.ndarray
    no_ci: np.ndarray
    inside_margin: np.ndarray
    direction: np.ndarray
    arm_only: np.ndarray
    baseline_only: np.ndarray


@dataclass(frozen=True)
class Rule:
    """One row of the rule table: the verdict, when it applies (words, for the docs and the page) and its test (on
    `Evidence`), and the sentence a row with that verdict says (formatted with the row's fields)."""

    verdict: Verdict
    condition: str
    holds: Callable[[Evidence], np.ndarray]
    sentence: str


def _more(e: Evidence):
    return np.asarray(e.arm_only) > np.asarray(e.baseline_only)


def _fewer(e: Evidence):
    return np.asarray(e.arm_only) < np.asarray(e.baseline_only)


STABILITY_SENTENCE = ("diverged on {arm_diverged} of {n_pairs} matched seeds, {baseline} on {baseline_diverged} "
                      "({decided_by}, p {p_stability})")
LOSS_SENTENCE = "Δ {delta} nats [{low}, {high}] over {n} matched seeds ({decided_by}, p {p_loss})"
RULES = (
    Rule(Verdict.LESS_STABLE,
         "the divergence test resolves that the arm diverges on more matched seeds than the baseline",
         lambda e: np.asarray(e.stability_resolved) & _more(e), STABILITY_SENTENCE),
    Rule(Verdict.MORE_STABLE,
         "the divergence test resolves that the arm diverges on fewer matched seeds than the baseline",
         lambda e: np.asarray(e.stability_resolved) & _fewer(e), STABILITY_SENTENCE),
    Rule(Verdict.NO_CI, "fixed-n only: fewer than two surviving pairs, or zero spread from fewer than three",
         lambda e: np.asarray(e.no_ci),
         "{n} matched seeds completed on both sides: too few for an interval (a spread needs two pairs, and zero "
         "spread three); run more seeds"),
    Rule(Verdict.NEGLIGIBLE, "no discordant divergence, and the loss interval lies inside ±min_effect",
         lambda e: (np.asarray(e.arm_only) == 0) & (np.asarray(e.baseline_only) == 0) & np.asarray(e.inside_margin),
         "Δ {delta} nats [{low}, {high}] over {n} matched seeds, inside ±{min_effect} nats ({decided_by})"),
    Rule(Verdict.BETTER, "the loss test resolves a lower loss, and the arm diverged on no matched seed the baseline "
         "completed (each such divergence is charged as an unbounded loss)",
         lambda e: np.asarray(e.loss_resolved) & (np.asarray(e.direction) < 0) & (np.asarray(e.arm_only) == 0),
         LOSS_SENTENCE),
    Rule(Verdict.WORSE, "the loss test resolves a higher loss, and the baseline diverged on no matched seed the arm "
         "completed",
         lambda e: np.asarray(e.loss_resolved) & (np.asarray(e.direction) > 0) & (np.asarray(e.baseline_only) == 0),
         LOSS_SENTENCE),
)
SENTENCES = {rule.verdict: rule.sentence for rule in RULES}
OTHERWISE = {"fixed": Verdict.WITHIN_NOISE, "sequential": Verdict.UNDECIDED}
OTHERWISE_CONDITION = "otherwise: within noise (fixed-n) / undecided (anytime-valid)"
BARRED = ("its {side} diverged on {count} matched seed(s) the other side completed: a loss claim in its favour "
          "is barred (a divergence may hide any loss)")


def decide(evidence: Evidence, path: str = "fixed") -> np.ndarray:
    """The verdict of every row: the first rule of `RULES` that holds, else the path's `OTHERWISE`."""
    conditions = [np.broadcast_to(rule.holds(evidence), np.shape(evidence.direction)) for rule in RULES]
    labels = np.array([str(rule.verdict) for rule in RULES], dtype=object)
    return np.select(conditions, labels, default=str(OTHERWISE[path]))


def barred(row: ComparisonRow) -> str | None:
    """Why a row's loss difference carries no claim although its interval excludes 0, or None: the side the
    survivors favour diverged where the other completed (the sentence the page and the CLI print)."""
    delta = row.get("delta")
    if delta is None or delta != delta or delta == 0:
        return None
    side, count = ("arm", row.get("arm_only")) if delta < 0 else ("baseline", row.get("baseline_only"))
    return BARRED.format(side=side, count=count) if count else None


def _number(value, digits: int = 3) -> str:
    return "?" if value is None or value != value else f"{float(value):.{digits}g}"


def sentence(row: ComparisonRow, baseline: str, min_effect: float) -> str | None:
    """What a resolved row says (its rule's sentence filled from the row), or None for an unresolved one. Plain
    text: the page escapes it."""
    template = SENTENCES.get(row["verdict"])
    if template is None:
        return None
    fields = {**row, "baseline": baseline, "min_effect": f"{min_effect:g}", "delta": _number(row.get("delta")),
              "low": _number(row.get("delta_ci_low")), "high": _number(row.get("delta_ci_high")),
              "p_loss": _number(row.get("p_holm"), 2), "decided_by": row.get("decided_by") or "",
              "p_stability": _number(row.get("p_seq_holm") if row.get("test") == "anytime"
                                     else row.get("p_stability_holm"), 2)}
    return template.format(**fields)


def rules_markdown() -> str:
    """The rule table as Markdown (docs/analysis.md holds this text verbatim)."""
    lines = ["| order | verdict | when |", "| --- | --- | --- |"]
    lines += [f"| {i} | `{rule.verdict}` | {rule.condition} |" for i, rule in enumerate(RULES, 1)]
    lines.append(f"| {len(RULES) + 1} | `{OTHERWISE['fixed']}` / `{OTHERWISE['sequential']}` | {OTHERWISE_CONDITION} |")
    return "\n".join(lines)


def rules_text() -> str:
    """The rule table as plain lines (`harness compare --rules`)."""
    lines = [f"{i}. {rule.verdict}: {rule.condition}" for i, rule in enumerate(RULES, 1)]
    lines.append(f"{len(RULES) + 1}. {OTHERWISE_CONDITION}")
    return "\n".join(lines)
