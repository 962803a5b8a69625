"""A sweep's comparison table straight from the store: its finished cells read and checked
(`analysis.reading.finished`), the table (`analysis.comparison.table`), and a search's selection column."""

from __future__ import annotations

from analysis.comparison.row import ComparisonRow
from analysis.comparison.table import comparison_table
from analysis.reading.cells import METRIC, MIN_EFFECT, add_selection
from analysis.reading.finished import finished_cells
from analysis.reading.source import SweepSource


def compare(sweep: SweepSource, metric: str = METRIC, baseline: str | None = None,
            min_effect: float = MIN_EFFECT) -> list[ComparisonRow]:
    """One row per (arm, lr), the baseline's first; in a search, each row also says how its seed outcomes were
    chosen (`analysis.reading.cells.add_selection`)."""
    cells = finished_cells(sweep, metric, baseline)
    rows = comparison_table(cells, min_effect)
    add_selection(rows, cells)
    return rows
