"""What a ladder sweep's answer compares: arms with each other at the largest rung, never rungs with each other.

A ladder's arms are `<grid arm>@<rung>`, so the plain headline would set the baseline's smallest model against
every other arm at every size. Here each variant keeps the runs of its largest arm (the most parameters), named
by the variant alone, so the headline's comparison (the one outcome model, at each side's best LR) is arms at
the largest rung; the report adds the fitted gap at the target, or says why there is none.
"""

from __future__ import annotations

from analysis.ladder import SEPARATOR
from analysis.reading.cells import Cells
from analysis.reading.frames import Sweep


def variant(arm: str) -> str:
    """An arm's ladder variant: its name up to the rung."""
    return arm.split(SEPARATOR, 1)[0]


def largest_rung(sweep: Sweep, cells: Cells, best_lr: dict) -> tuple[Cells, dict, str, dict[str, str]]:
    """(cells of each variant's largest arm renamed to the variant, their best LRs by variant, the baseline's
    largest rung as shown, and each chosen arm → its variant)."""
    largest: dict[str, tuple[float, str]] = {}
    for arm, params in sweep.rows("SELECT arm, max(params) FROM sweep_runs GROUP BY arm"):
        size = float(params) if params is not None else -1.0
        if variant(arm) not in largest or size > largest[variant(arm)][0]:
            largest[variant(arm)] = (size, arm)
    chosen = {arm: name for name, (_, arm) in largest.items()}
    runs = tuple((chosen[arm], *rest) for arm, *rest in cells.runs if arm in chosen)
    confirmed = tuple((chosen[arm], lr, seeds) for arm, lr, seeds in cells.confirmed if arm in chosen)
    baseline = variant(cells.baseline)
    rung = largest[baseline][1].split(SEPARATOR, 1)[1] if SEPARATOR in largest[baseline][1] else largest[baseline][1]
    lrs = {chosen[arm]: lr for arm, lr in best_lr.items() if arm in chosen}
    return Cells(baseline, runs, confirmed), lrs, rung, chosen
