"""What a comparison is computed from: the metric, the smallest effect that matters, and the finished cells.

Neither the store nor scipy is imported here: `harness compare` reads the cells in a child process that
must not pay for scipy, and computes the table in a parent that must not pay for DuckDB.
"""

from __future__ import annotations

from dataclasses import dataclass

METRIC = "final_val_loss"
MIN_EFFECT = 0.01  # nats


@dataclass(frozen=True)
class Cells:
    """The resolved baseline arm and one row per finished run, (arm, lr, seed, searched, status, value),
    with lr None for a search that tunes the LR itself; status is the run's outcome on the metric
    (`analysis.outcomes`): 'completed' with a finite value, or 'diverged'."""

    baseline: str
    runs: tuple[tuple, ...]
