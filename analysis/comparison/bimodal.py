"""Per-seed outcomes that split into two groups: a run escapes a plateau or it does not, and the mean of the two
describes neither. Flagged, never hidden: the tables' means and tests stay as they are, and the report and
`harness compare` say which (arm, lr) cells split and where.

The rule: a cell's completed seeds (three or more), sorted, split at their largest gap; the cell is bimodal when
that gap is at least
- `MIN_GAP` nats (a plateau escaped or not moves the loss by tenths of a nat, seed noise by hundredths),
- `WITHIN_SCALES` × the spread inside the two groups (their pooled standard deviation), and
- `GAP_SCALES` × the sweep's seed noise: a robust scale pooled over every cell, 1.4826 × the median absolute
  deviation of the seeds from their own cell's median (the cell's median seed left out: it deviates by 0 by
  construction), which split cells, each group tight, barely move.
Arms differ in noise, so the pooled scale alone would flag a noisy arm among quiet ones, and the within-group
spread alone is unreliable from three seeds: all three must hold. Simulated (tests/analysis/comparison/test_bimodal.py):
Gaussian seeds with sd 0.08 nats, 20 times the pooled noise, are flagged in about 3% of cells of three seeds and
under 0.5% from six; sd 0.04 in 0.05%; a planted split of 0.9 nats (noise 0.02) always.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GAP_SCALES = 5.0
WITHIN_SCALES = 6.0
MIN_GAP = 0.2  # nats
MAD_TO_SD = 1.4826


@dataclass(frozen=True)
class Split:
    """A bimodal cell: the seeds below and above its largest gap, and each group's mean."""

    low_seeds: int
    low_mean: float
    high_seeds: int
    high_mean: float

    def describe(self) -> str:
        """'2 seeds near 5.91, 1 near 5.02' (the larger group first)."""
        groups = sorted([(self.low_seeds, self.low_mean), (self.high_seeds, self.high_mean)], key=lambda g: -g[0])
        (n1, m1), (n2, m2) = groups
        return f"{n1} seed{'s' if n1 != 1 else ''} near {m1:.3g}, {n2} near {m2:.3g}"


def seed_noise(cells: dict[tuple, list[float]]) -> float:
    """The pooled robust seed noise of the cells' completed values (NaN when no cell has two seeds)."""
    deviations = []
    for completed in cells.values():
        values = np.sort(np.asarray(completed, dtype=float))
        if len(values) < 2:
            continue
        residuals = np.abs(values - np.median(values))
        if len(values) % 2:  # odd: drop the median seed's own zero
            residuals = np.delete(residuals, len(values) // 2)
        deviations.extend(residuals)
    return MAD_TO_SD * float(np.median(deviations)) if deviations else float("nan")


def bimodal_cells(cells: dict[tuple, list[float]]) -> dict[tuple, Split]:
    """key → its `Split`, for the cells (key → completed per-seed values) that split into two groups."""
    noise = seed_noise(cells)
    threshold = max(GAP_SCALES * noise, MIN_GAP) if np.isfinite(noise) else float("inf")
    found = {}
    for key, completed in cells.items():
        values = np.sort(np.asarray(completed, dtype=float))
        if len(values) < 3:
            continue
        gaps = np.diff(values)
        at = int(np.argmax(gaps))
        low, high = values[: at + 1], values[at + 1:]
        within = np.sqrt((((low - low.mean()) ** 2).sum() + ((high - high.mean()) ** 2).sum()) / (len(values) - 2))
        if gaps[at] >= max(threshold, WITHIN_SCALES * within):
            found[key] = Split(len(low), float(low.mean()), len(high), float(high.mean()))
    return found
