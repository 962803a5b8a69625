"""Decision consistency: would a smaller rung have made the largest rung's decisions?

DataDecide (Magnusson et al., ICML 2025) measures it as pairwise decision accuracy: over pairs of options,
the share whose order at the small scale matches the order at the target scale (about 80% for a single 150M
rung predicting 1B). Here the target is the ladder's largest rung, and only pairs whose order is *resolved*
there count as decisions to match: each pair of variants is compared at its best LRs on matched seeds with the
paired t-test, Holm-adjusted across the rung's pairs, resolved at p < 0.05 (the rule of `analysis.reversals`).
At each smaller rung:

- `agree`: the share of those pairs whose mean order is the same (the decision that rung alone would make,
  resolved or not: DataDecide's number);
- `resolved_same` / `resolved_opposite`: how many of them that rung resolves itself, in the same or the
  opposite order (an opposite one is a resolved reversal of a decision).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from analysis import stats
from analysis.ladder.points import LadderData

COLUMNS = ["rung", "compute", "compute_share", "arms", "pairs", "agree", "share", "resolved_same", "resolved_opposite"]


def pair_tests(loss: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int]]]:
    """At one rung, loss [V, S]: per pair (a < b) the mean difference a − b on matched seeds, its Holm-adjusted
    paired p, and the pairs (both variants ran)."""
    pairs = [(a, b) for a, b in itertools.combinations(range(loss.shape[0]), 2)
             if not np.isnan(loss[a]).all() and not np.isnan(loss[b]).all()]
    if not pairs:
        return np.zeros(0), np.zeros(0), []
    tests = stats.paired_tests(np.stack([loss[a] - loss[b] for a, b in pairs]))
    return tests.delta.mean, stats.holm(tests.p), pairs


def decision_consistency(data: LadderData) -> pd.DataFrame:
    """`COLUMNS`, one row per rung below the largest (smallest first); `pairs` counts the pairs resolved at the
    largest rung that both variants ran here too, `share` = agree / pairs (NaN without such a pair)."""
    decided = _decided(data)
    top_compute = np.nanmedian(data.compute[:, -1])
    rows = []
    for r, rung in enumerate(data.rungs[:-1]):
        delta, p, pairs = pair_tests(data.loss[:, r])
        here = {pair: (np.sign(d), q < stats.ALPHA) for pair, d, q in zip(pairs, delta, p) if pair in decided}
        agree = sum(sign == decided[pair] for pair, (sign, _) in here.items())
        compute = np.nanmedian(data.compute[:, r])
        rows.append({"rung": rung, "compute": compute, "compute_share": compute / top_compute,
                     "arms": int((~np.isnan(data.loss[:, r])).any(-1).sum()), "pairs": len(here), "agree": agree,
                     "share": agree / len(here) if here else np.nan,
                     "resolved_same": sum(ok and sign == decided[pair] for pair, (sign, ok) in here.items()),
                     "resolved_opposite": sum(ok and sign == -decided[pair] for pair, (sign, ok) in here.items())})
    return pd.DataFrame(rows, columns=COLUMNS)


def _decided(data: LadderData) -> dict[tuple[int, int], float]:
    """The pairs of variants the largest rung resolves, each with the sign of its difference."""
    delta, p, pairs = pair_tests(data.loss[:, -1])
    return {pair: np.sign(d) for pair, d, q in zip(pairs, delta, p) if q < stats.ALPHA and d != 0}


def decided_pairs(data: LadderData) -> int:
    """How many pairs of variants the largest rung resolves (what consistency is measured against)."""
    return len(_decided(data))
