"""The `--sequential` columns of `harness compare`, and the decisions `harness sweep --until-decided` acts on:
per (arm, lr), the anytime-valid test (`analysis.sequential`) of the per-seed differences arm − baseline at
the same LR, on the seeds both completed, in seed order.

Like the fixed-n loss test it is conditional on survival: a seed where either side diverged is no pair (the
comparison's divergence columns say how many). `decided_at` counts pairs in seed order, so with every seed
completed it is the number of seeds at which the sequence first decided.
"""

from __future__ import annotations

import math

from analysis.cells import MIN_EFFECT, Cells
from analysis.comparison import _grouped, _per_seed
from analysis.sequential import Sequential, sequential_test

SEQUENTIAL_COLUMNS = ["cs_low", "cs_high", "seq_verdict", "decided_at"]


def paired_differences(cells: Cells) -> dict[tuple, list[float]]:
    """(arm, lr) of every non-baseline arm → its differences from the baseline on the seeds both completed
    with a finite metric, in seed order."""
    grouped = _grouped(cells)
    outcomes = {key: _per_seed(cell) for key, cell in grouped.items()}
    pairs = {}
    for (arm, lr), mine in outcomes.items():
        if arm == cells.baseline:
            continue
        theirs = outcomes.get((cells.baseline, lr), {})
        both = [s for s in sorted(set(mine) & set(theirs)) if math.isfinite(mine[s]) and math.isfinite(theirs[s])]
        pairs[(arm, lr)] = [mine[s] - theirs[s] for s in both]
    return pairs


def sequential_decisions(cells: Cells, min_effect: float = MIN_EFFECT) -> dict[tuple, Sequential]:
    """(arm, lr) of every non-baseline arm → its anytime-valid test against the baseline."""
    return {key: sequential_test(diffs, min_effect) for key, diffs in paired_differences(cells).items()}


def add_sequential(rows: list[dict], cells: Cells, min_effect: float = MIN_EFFECT) -> None:
    """Fill `SEQUENTIAL_COLUMNS` into the comparison's rows (the baseline's: empty, verdict 'baseline'); a bound
    is empty while the sequence still spans the whole line (under five pairs at α = 0.05)."""
    decisions = sequential_decisions(cells, min_effect)
    for row in rows:
        test = decisions.get((row["arm"], row["lr"]))
        if test is None:
            row.update({"cs_low": math.nan, "cs_high": math.nan, "seq_verdict": "baseline", "decided_at": None})
        else:
            low, high = (bound if math.isfinite(bound) else math.nan for bound in (test.low, test.high))  # ±inf: no bound yet
            row.update({"cs_low": low, "cs_high": high, "seq_verdict": test.verdict, "decided_at": test.decided_at})
