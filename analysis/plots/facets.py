"""Which switch splits a sweep's figures into panels: the scale axis, else the grid's second switch.

The second switch of `sweep.info.axes` facets only when the grid is a product over it: every arm has one
value of it and each value holds the same number (≥ 2) of arms. A union grid (`grid(qk_norm=…) +
grid(z_loss=…)`) has no such switch, and its figures stay one panel.
"""

from __future__ import annotations

import pandas as pd

from analysis.ladder.across import scale_axis
from analysis.reading.frames import Sweep


def arm_values(sweep: Sweep, switch: str) -> pd.Series | None:
    """arm → its value of `switch` (as text), or None when some arm has several values."""
    if switch not in sweep.finished:
        return None
    values = sweep.finished.groupby("arm")[switch].agg(lambda v: set(v.astype(str)))
    return values.map(lambda found: next(iter(found))) if values.map(len).eq(1).all() else None


def facet_switch(sweep: Sweep) -> str | None:
    """The switch whose values get a panel each, or None for one panel."""
    axis = scale_axis(sweep)
    if axis is not None:
        return axis if arm_values(sweep, axis) is not None else None
    if len(sweep.info.axes) < 2:
        return None
    second = sweep.info.axes[1]
    values = arm_values(sweep, second)
    if values is None:
        return None
    sizes = values.value_counts()
    return second if len(sizes) > 1 and sizes.nunique() == 1 and sizes.iloc[0] >= 2 else None
