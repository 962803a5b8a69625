"""One decision at one rung, judged by the project's one outcome model.

A **decision** is a pair of variants of one sweep (every pair of its variants, the sweep's baseline first). At a
rung each variant is taken at its best LR there (the argmin of its mean ℓ over seeds, a divergence counted as ℓ₀:
the LR sensitivity's rule), the LR erased so that the two pair seed by seed, and the pair is put to
`analysis.comparison.table.comparison_table` as a `Cells` with the first variant as the baseline: the row of the second
is what `harness compare` would say of a sweep of these two arms alone at that rung. No adjustment is made across
decisions: each is its own question, as in DataDecide.

From the row, two things are read:

- its **verdict**, and the order a resolved one gives (`ORDER`: `better` and `more stable` put the second variant
  ahead, −1; `worse` and `less stable` the first, +1); `negligible` is resolved too, but as "no difference that
  matters", which has no order to agree with;
- its **pick**, the order the rung's evidence points to, resolved or not (`pick`): what that rung alone would
  decide, DataDecide's number.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

import numpy as np
import pandas as pd

from analysis.comparison.row import ComparisonRow
from analysis.comparison.rules import Verdict
from analysis.comparison.table import comparison_table
from analysis.reading.cells import Cells

# The verdicts that order a decision (a StrEnum: plain label strings look up alike); −1: the second variant ahead.
ORDER: dict[str, int] = {Verdict.BETTER: -1, Verdict.MORE_STABLE: -1, Verdict.WORSE: 1, Verdict.LESS_STABLE: 1}
NEGLIGIBLE = Verdict.NEGLIGIBLE


class Reference(StrEnum):
    """What the reference rung said of a decision: one with an order is scored; the rest are counted apart."""

    DECIDED = "decided"  # a verdict with an order (better, worse, more or less stable)
    TIE = "negligible"
    UNRESOLVED = "unresolved"  # within noise, or no CI
    NOT_RUN = "not at the reference"  # a variant has no outcome there


class Decision(NamedTuple):
    """A pair of variants of one sweep; `first` is the baseline of its comparisons (the sweep's baseline, or the
    earlier in its variant order)."""

    sweep: str
    first: str
    second: str


def pick(row: ComparisonRow) -> int:
    """The order a comparison row points to, resolved or not: −1 the arm (second variant) ahead, +1 the baseline,
    0 no evidence. It is the row's `direction` (the one outcome model: the side with more discordant divergences is
    behind, else the sign of the loss difference)."""
    return int(row["direction"] or 0)


def reference_class(row: ComparisonRow | None) -> Reference:
    """How the reference rung's row counts (`NOT_RUN`: no row)."""
    if row is None:
        return Reference.NOT_RUN
    verdict = row["verdict"]
    return (Reference.DECIDED if verdict in ORDER else Reference.TIE if verdict == NEGLIGIBLE
            else Reference.UNRESOLVED)


def best_lrs(runs: pd.DataFrame) -> dict[tuple, float]:
    """(sweep, variant, rung) → the LR with the lowest mean ℓ over its seeds (the first such LR on a tie)."""
    means = runs.groupby(["sweep", "variant", "rung", "lr"], sort=True)["loss"].mean().dropna()
    return {key[:3]: key[3] for key in means.groupby(level=[0, 1, 2]).idxmin()}


def pair_cells(runs: pd.DataFrame, first: str, second: str, lrs: dict) -> Cells:
    """The two variants' runs at one rung of one sweep, each at its LR in `lrs`, as a `Cells` against `first`."""
    keys = zip(runs["sweep"], runs["variant"], runs["rung"], runs["lr"])
    keep = np.array([variant in (first, second) and lr == lrs.get((sweep, variant, rung))
                     for sweep, variant, rung, lr in keys], dtype=bool)
    chosen = runs[keep]
    rows = zip(chosen["variant"], chosen["seed"], chosen["outcome"], chosen["value"])
    return Cells(first, tuple((variant, None, int(seed), False, outcome, float(value))
                              for variant, seed, outcome, value in rows))


def judge(runs: pd.DataFrame, first: str, second: str, lrs: dict, min_effect: float) -> ComparisonRow | None:
    """The comparison row of `second` against `first` in `runs` (one sweep, one rung); None when either has no
    outcome there."""
    cells = pair_cells(runs, first, second, lrs)
    if {arm for arm, *_ in cells.runs} != {first, second}:
        return None
    return next(row for row in comparison_table(cells, min_effect) if row["arm"] == second)
