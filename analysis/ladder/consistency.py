"""Decision consistency: would a smaller rung have made the largest rung's decisions? (`harness compare --ladder`)

DataDecide (Magnusson et al., ICML 2025) measures it as pairwise decision accuracy: over pairs of options,
the share whose order at the small scale matches the order at the target scale (about 80% for a single 150M
rung predicting 1B). Here it is `analysis.ladder.decisions` on the ladder's points: each pair of variants at
each rung judged by `comparison_table` at their best LRs, the decisions those with an order at the largest rung
(better or worse; a negligible or unresolved pair is no decision). At each smaller rung:

- `pairs`: those decisions both variants ran there; `agree`, `share`: how many that rung's pick (the order its
  evidence points to, resolved or not) gets right, DataDecide's number; `low`, `high`: the share's 95% interval;
- `resolved_same` / `resolved_opposite`: how many of them that rung resolves itself, in the same or the
  opposite order (an opposite one is a resolved reversal of a decision).

The points keep no diverged run (`analysis.ladder.points`), so these decisions see loss alone; `harness decisions`
reads the runs themselves, divergences included.
"""

from __future__ import annotations

import itertools

import pandas as pd

from analysis.ladder.decision_runs import from_ladder
from analysis.ladder.decision_verdicts import Reference, best_lrs, judge, reference_class
from analysis.ladder.decisions import decision_accuracy
from analysis.ladder.points import LadderData
from analysis.reading.cells import MIN_EFFECT

COLUMNS = ["rung", "compute", "compute_share", "arms", "pairs", "agree", "share", "low", "high", "resolved_same",
           "resolved_opposite"]


def decision_consistency(data: LadderData) -> pd.DataFrame:
    """`COLUMNS`, one row per rung below the largest (smallest first); `pairs` counts the pairs decided at the
    largest rung that both variants ran here too, `share` = agree / pairs (NaN without such a pair)."""
    runs = from_ladder(data)
    rows = decision_accuracy(runs).rungs
    arms = runs.runs.groupby("rung")["variant"].nunique()
    return pd.DataFrame({"rung": rows["rung"], "compute": rows["compute"], "compute_share": rows["compute_share"],
                         "arms": [int(arms.get(rung, 0)) for rung in rows["rung"]], "pairs": rows["decisions"],
                         "agree": rows["agree"], "share": rows["accuracy"], "low": rows["low"], "high": rows["high"],
                         "resolved_same": rows["resolved_same"], "resolved_opposite": rows["resolved_opposite"]},
                        columns=COLUMNS)


def decided_pairs(data: LadderData) -> int:
    """How many pairs of variants the largest rung decides (what consistency is measured against)."""
    runs = from_ladder(data)
    top = runs.runs[runs.runs["rung"] == runs.reference]
    lrs = best_lrs(top)
    return sum(reference_class(judge(top, a, b, lrs, MIN_EFFECT)) == Reference.DECIDED
               for variants in runs.variants.values() for a, b in itertools.combinations(variants, 2))
