"""Does the proxy decide right? DataDecide's decision accuracy of every rung of one or more ladder sweeps.

The decisions are every pair of variants of each sweep, pooled across sweeps (`decision_verdicts`). The largest
rung is the **reference**: a decision whose verdict there has an order (better, worse, more or less stable) is
scored; one the reference finds `negligible`, leaves unresolved (within noise, no CI) or did not run is counted
apart, never as agreement. At each smaller rung:

- `decisions`: the scored decisions that ran there; `agree`: how many of them the rung's **pick** (the order its
  evidence points to, resolved or not) gets right; `accuracy` = agree / decisions, DataDecide's number;
- `low`, `high`: the 95% interval of the share whose true order there agrees (`decision_bootstrap`, from the
  rung's seeds; the reference held fixed);
- `resolved_same`, `resolved_opposite`: how many the rung resolves itself, each way; `no_pick`: how many it could
  not order at all (no pair of outcomes);
- `compute`, `compute_share`: the rung's training compute and its share of the reference's;
- `meets`: whether the rung decides at the target: its interval's **lower bound** ≥ target. The point estimate
  alone would let a few lucky seeds pass a rung that decides worse; the bound asks that the agreement not be
  explained by the seeds the rung happened to have.

The **cheapest rung that decides** is the smallest rung that meets the target. Per decision, its pick at every
rung, the rungs where the pick changes on the way up (`flips_at`), and the smallest rung from which every larger
one agrees with the reference (`settles_at`; the reference itself when the rung below it disagrees).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from analysis.comparison.row import ComparisonRow
from analysis.ladder.decision_bootstrap import BOOTSTRAP_SEED, REPLICATES, accuracy_interval
from analysis.ladder.decision_runs import DecisionRuns
from analysis.ladder.decision_verdicts import ORDER, Decision, Reference, best_lrs, judge, pick, reference_class
from analysis.reading.cells import MIN_EFFECT

Judged = dict[tuple, ComparisonRow]  # (decision, rung) → the second variant's row against the first

TARGET = 0.9
RUNG_COLUMNS = ["rung", "compute", "compute_share", "decisions", "agree", "accuracy", "low", "high", "resolved_same",
                "resolved_opposite", "no_pick", "meets"]
DECISION_COLUMNS = ["sweep", "first", "second", "decision", "reference", "verdict", "winner", "settles_at", "flips_at"]
PICK_COLUMNS = ["sweep", "first", "second", "rung", "verdict", "delta", "pick", "agrees"]


@dataclass(frozen=True)
class DecisionAccuracy:
    """Every rung's accuracy (`rungs`, the reference excluded), every decision (`decisions`) and its pick at every
    rung (`picks`); `target` is the accuracy a rung must meet."""

    data: DecisionRuns
    target: float
    rungs: pd.DataFrame
    decisions: pd.DataFrame
    picks: pd.DataFrame

    @property
    def cheapest(self) -> dict | None:
        """The smallest rung that meets the target (a row of `rungs`), or None."""
        meeting = self.rungs[self.rungs["meets"]]
        return meeting.iloc[0].to_dict() if len(meeting) else None

    def counted(self, status: str) -> int:
        """How many decisions the reference classed as `status` (decision_verdicts: decided, negligible, ...)."""
        return int((self.decisions["reference"] == status).sum())


def _judged(data: DecisionRuns, decisions: list[Decision], min_effect: float) -> Judged:
    """(decision, rung) → the comparison row of its second variant against its first, where both ran."""
    lrs, found = best_lrs(data.runs), {}
    for (sweep, rung), runs in data.runs.groupby(["sweep", "rung"]):
        for d in (d for d in decisions if d.sweep == sweep):
            row = judge(runs, d.first, d.second, lrs, min_effect)
            if row is not None:
                found[(d, rung)] = row
    return found


def _pick_rows(data: DecisionRuns, decisions: list[Decision], judged: Judged, order: dict) -> pd.DataFrame:
    """`PICK_COLUMNS`: every judged decision at every rung; `agrees` only for those the reference orders."""
    rows = []
    for d in decisions:
        for rung in data.rungs:
            row = judged.get((d, rung))
            if row is not None:
                chosen = pick(row)
                rows.append({"sweep": d.sweep, "first": d.first, "second": d.second, "rung": rung,
                             "verdict": str(row["verdict"]), "delta": row["delta"], "pick": chosen,
                             "agrees": bool(chosen == order[d]) if d in order else None})
    return pd.DataFrame(rows, columns=PICK_COLUMNS)


def _settling(data: DecisionRuns, picks: pd.DataFrame, d: Decision, order: int) -> tuple[str, list[str]]:
    """(settles_at, flips_at) of a scored decision: where its picks come to agree for good, and where they change."""
    by_rung = {rung: p for rung, p in zip(picks["rung"], picks["pick"])}
    path = [by_rung.get(rung) for rung in data.rungs[:-1]] + [order]
    flips = [data.rungs[r] for r in range(1, len(path)) if path[r] is not None and path[r - 1] is not None
             and path[r] != path[r - 1]]
    settles = len(path) - 1
    while settles > 0 and path[settles - 1] == order:
        settles -= 1
    return data.rungs[settles], flips


def _decision_rows(data: DecisionRuns, decisions: list[Decision], judged: Judged, picks: pd.DataFrame) -> pd.DataFrame:
    """`DECISION_COLUMNS`: every decision, its reference verdict and, for a scored one, its winner and flips."""
    rows = []
    for d in decisions:
        row = judged.get((d, data.reference))
        status = reference_class(row)
        order = ORDER.get(row["verdict"]) if row is not None else None  # set exactly when the status is DECIDED
        mine = picks[(picks["sweep"] == d.sweep) & (picks["first"] == d.first) & (picks["second"] == d.second)]
        settles, flips = _settling(data, mine, d, order) if order is not None else (None, [])
        winner = None if order is None else data.label(d.sweep, d.second if order < 0 else d.first)
        rows.append({"sweep": d.sweep, "first": d.first, "second": d.second,
                     "decision": f"{data.label(d.sweep, d.second)} vs {data.label(d.sweep, d.first)}",
                     "reference": str(status), "verdict": None if row is None else str(row["verdict"]),
                     "winner": winner, "settles_at": settles, "flips_at": flips})
    return pd.DataFrame(rows, columns=DECISION_COLUMNS)


def _rung_row(data: DecisionRuns, rung: str, scored: dict[Decision, int], judged: Judged, target: float,
              replicates: int, rng: np.random.Generator) -> dict:
    """One rung's accuracy among the `scored` decisions (decision → the reference's order) that ran there."""
    present = [d for d in scored if (d, rung) in judged]
    rows, truth = [judged[(d, rung)] for d in present], [scored[d] for d in present]
    picks, own = [pick(row) for row in rows], [ORDER.get(str(row["verdict"]), 0) for row in rows]
    agree = sum(p == t for p, t in zip(picks, truth))
    low, high = accuracy_interval(rows, truth, replicates, rng) if present else (np.nan, np.nan)
    compute = data.compute(rung)
    return {"rung": rung, "compute": compute, "compute_share": compute / data.compute(data.reference),
            "decisions": len(present), "agree": agree, "accuracy": agree / len(present) if present else np.nan,
            "low": low, "high": high, "resolved_same": sum(o == t for o, t in zip(own, truth)),
            "resolved_opposite": sum(o == -t for o, t in zip(own, truth)), "no_pick": picks.count(0),
            "meets": bool(present) and low >= target}


def decision_accuracy(data: DecisionRuns, target: float = TARGET, min_effect: float = MIN_EFFECT,
                      replicates: int = REPLICATES, seed: int = BOOTSTRAP_SEED) -> DecisionAccuracy:
    """Decision accuracy of every rung below the reference, every decision's picks, and the cheapest rung that
    meets `target` (see the module docstring)."""
    decisions = [Decision(sweep, a, b) for sweep, variants in data.variants.items()
                 for a, b in itertools.combinations(variants, 2)]
    judged = _judged(data, decisions, min_effect)
    order = {d: ORDER[str(judged[(d, data.reference)]["verdict"])] for d in decisions
             if reference_class(judged.get((d, data.reference))) == Reference.DECIDED}
    picks = _pick_rows(data, decisions, judged, order)
    rng = np.random.default_rng(seed)
    rungs = [_rung_row(data, rung, order, judged, target, replicates, rng) for rung in data.rungs[:-1]]
    return DecisionAccuracy(data, target, pd.DataFrame(rungs, columns=RUNG_COLUMNS),
                            _decision_rows(data, decisions, judged, picks), picks)
