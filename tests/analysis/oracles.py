"""Independent oracles the analysis tests compare against: rules written out plainly, not the code under test."""

from __future__ import annotations

import math


def holm_by_definition(p: list[float]) -> list[float]:
    """Holm's step-down rule written out: the i-th smallest of m p-values times m − i, running max, cap 1;
    NaN is no test."""
    tested = [i for i in range(len(p)) if not math.isnan(p[i])]
    out, running = [math.nan] * len(p), 0.0
    for rank, i in enumerate(sorted(tested, key=lambda i: p[i])):
        running = max(running, min(1.0, (len(tested) - rank) * p[i]))
        out[i] = running
    return out
