"""What a comparison is computed from: the metric, the smallest effect that matters, and the finished cells.

Neither the store nor scipy is imported here: `harness compare` reads the cells in a child process that
must not pay for scipy, and computes the table in a parent that must not pay for DuckDB.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the row's module imports numpy, which this one need not
    from analysis.comparison.row import ComparisonRow

METRIC = "final_val_loss"
MIN_EFFECT = 0.01  # nats


@dataclass(frozen=True)
class Cells:
    """The resolved baseline arm and one row per finished run, (arm, lr, seed, searched, status, value),
    with lr None for a search that tunes the LR itself; status is the run's outcome on the metric
    (`analysis.reading.outcomes`): 'completed' with a finite value, or 'diverged'."""

    baseline: str
    runs: tuple[tuple, ...]
    confirmed: tuple[tuple[str, float | None, int], ...] = ()  # (arm, lr, fresh seeds) judged on confirmation cells


def judged_runs(rows) -> tuple[tuple[tuple, ...], tuple[tuple[str, float | None, int], ...]]:
    """The rows a comparison is judged on, from rows (arm, lr, seed, searched, status, value, confirming), and the
    (arm, lr, fresh seeds) of the searched arms judged on confirmation cells.

    A search's per-seed best trial was selected on the very metric it is then tested on, so its noise is biased
    in its favour (docs/analysis.md#honest-search-confirmation-seeds). Where an (arm, lr) has confirmation cells,
    the chosen configuration rerun on seeds no trial used, its outcomes come from those alone: its trials are
    left out."""
    confirmed = defaultdict(set)
    for arm, lr, seed, *_, confirming in rows:
        if confirming:
            confirmed[(arm, lr)].add(seed)
    runs = tuple(row[:6] for row in rows if not (row[3] and (row[0], row[1]) in confirmed))
    return runs, tuple((arm, lr, len(seeds)) for (arm, lr), seeds in confirmed.items())


SELECTION = "selection"  # the comparison column saying how a searched arm's seed outcomes were chosen


def add_selection(rows: list[ComparisonRow], cells: Cells) -> list[str]:
    """Mark each comparison row of a searched arm with how its seed outcomes were chosen: 'confirmed on N
    fresh seeds', or 'best trial per seed' (selected on the tested metric, so biased in its favour). Returns
    the columns added: [SELECTION], or none for a sweep without a search."""
    chosen = {(arm, lr): "best trial per seed" for arm, lr, _, searched, *_ in cells.runs if searched}
    chosen.update({(arm, lr): f"confirmed on {n} fresh seeds" for arm, lr, n in cells.confirmed})
    if not chosen:
        return []
    for row in rows:
        row["selection"] = chosen.get((row["arm"], row["lr"]))
    return [SELECTION]
