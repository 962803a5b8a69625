"""The answer a report leads with: each arm at its own best LR against the baseline at its own best LR.

The per-(arm, LR) comparison pairs arm and baseline at the same LR; a reader asks which arm wins when each is
trained at the LR that suits it (Wortsman et al. 2023 compare arms this way). So the headline keeps each arm's
runs at its best LR (the LR sensitivity's: the argmin of ℓ(η), a divergence counted as ℓ₀), pairs them with the
baseline's at its best LR seed by seed, and runs the comparison's own tests and verdict rules on those pairs
(`analysis.comparison.table`; Holm across the headline's rows). Both sides chose their LR on these seeds, which favours
each a little; with a few LRs on a grid the effect is small and it applies to both.

Each row also plans seeds for the *observed* difference, beside those for `min_effect`: a resolved difference of
0.05 nats needs few seeds, while resolving ±0.01 may need a hundred, and both numbers are labelled as such.

**Which test decides.** A sweep whose seed counts were fixed in advance is judged by the fixed-n table. Once seeds
were added adaptively (`--until-decided` stopped adding where a comparison was decided), a fixed-n p-value no
longer means what it says, so every row is judged by the anytime-valid table alone
(`analysis.comparison.sequential_table`, the same outcome model and rules): its verdict, its 95% confidence sequence and
its anytime Holm p replace the fixed-n ones, and `decided_by` names the test.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from analysis.comparison.row import ComparisonRow
from analysis.comparison.rules import RESOLVED, Verdict
from analysis.comparison.table import bimodal_splits, comparison_table
from analysis.reading.cells import Cells

# a row's `test`: which table judged it
FIXED: Final = "fixed"
ANYTIME: Final = "anytime"


@dataclass(frozen=True)
class Headline:
    """One arm against the baseline, each at its best LR (`row`: a comparison row with the LR erased)."""

    arm: str
    lr: float | None  # the arm's best LR (None: unknown or searched)
    baseline_lr: float | None
    row: ComparisonRow  # its seeds_needed_observed: matched seeds for 80% power at the observed difference; `test`: the
    # table that judged it ('fixed' or ANYTIME: then verdict, delta_ci_*, p_holm and decided_by are that table's)

    @property
    def anytime(self) -> bool:
        """Judged by the anytime-valid table (seeds were added adaptively)."""
        return self.row.get("test") == ANYTIME

    @property
    def seeds_for_observed(self) -> int | None:
        return self.row["seeds_needed_observed"]

    @property
    def resolved(self) -> bool:
        return self.row["verdict"] in RESOLVED

    @property
    def more_seeds(self) -> int | None:
        """Seeds to add to resolve the observed difference (None: unknown)."""
        return None if self.seeds_for_observed is None else max(0, self.seeds_for_observed - (self.row["n"] or 0))


def _same_lr(lr, best) -> bool:
    missing = lr is None or (isinstance(lr, float) and math.isnan(lr))
    return (missing and (best is None or math.isnan(best))) or (not missing and best is not None and lr == best)


def at_best_lr(cells: Cells, best_lr: dict[str, float]) -> Cells:
    """The cells of each arm at its best LR only, the LR erased so that every arm pairs with the baseline."""
    runs = tuple((arm, None, *rest) for arm, lr, *rest in cells.runs if _same_lr(lr, best_lr.get(arm)))
    confirmed = tuple((arm, None, n) for arm, lr, n in cells.confirmed if _same_lr(lr, best_lr.get(arm)))
    return Cells(cells.baseline, runs, confirmed)


def _anytime(rows: list[ComparisonRow], cells: Cells, min_effect: float) -> None:
    """Judge `rows` by the anytime-valid table: its verdict, interval, p and test replace the fixed-n ones."""
    from analysis.comparison.sequential_table import add_sequential

    add_sequential(rows, cells, min_effect)
    for row in rows:
        if row["verdict"] == Verdict.BASELINE:
            continue
        row.update({"verdict": row["seq_verdict"], "delta_ci_low": row["cs_low"], "delta_ci_high": row["cs_high"],
                    "p": row["p_seq"], "p_holm": row["p_seq_holm"], "decided_by": row["seq_decided_by"],
                    "test": ANYTIME})


def headlines(cells: Cells, best_lr: dict[str, float], min_effect: float, anytime: bool = False) -> list[Headline]:
    """Each arm other than the baseline at its best LR against the baseline at its best LR, in arm order; with
    `anytime` (seeds added adaptively), judged by the anytime-valid table alone."""
    judged = at_best_lr(cells, best_lr)
    rows = comparison_table(judged, min_effect)
    for row in rows:
        row["test"] = FIXED
    if anytime:
        _anytime(rows, judged, min_effect)
    rows = [row for row in rows if row["verdict"] != Verdict.BASELINE]
    splits = bimodal_splits(cells)
    found = []
    for row in rows:
        arm_lr, baseline_lr = best_lr.get(row["arm"]), best_lr.get(cells.baseline)
        sides = [(side, splits.get((name, lr))) for side, name, lr in
                 (("the arm", row["arm"], arm_lr), ("the baseline", cells.baseline, baseline_lr))]
        row["bimodal"] = "; ".join(f"{side}: {split.describe()}" for side, split in sides if split) or None
        found.append(Headline(row["arm"], arm_lr, baseline_lr, row))
    return found


def winner(lines: list[Headline]) -> Headline | None:
    """The arm resolved better than the baseline by the most, if any is."""
    better = [line for line in lines if line.row["verdict"] == Verdict.BETTER]
    return min(better, key=lambda line: line.row["delta"]) if better else None
