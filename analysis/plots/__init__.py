"""The report's figures: name → function(Context) -> Plot. `harness plot NAME SWEEP` draws one of them (`ladder` and
`decisions` only for a ladder sweep, whose report shows them in its own section). `bands` and `facets` are
the rules every figure shares, PNG and interactive: the band around a mean over seeds, and the switch that splits
a sweep's figures into panels."""

from __future__ import annotations

from analysis.plots import attention, compute, cost, curves, decisions, ladder, logits, lr, spikes
from analysis.plots.base import Context, Plot, make_context

FIGURES = {
    "curves": curves.figure,
    "lr": lr.figure,
    "attention": attention.figure,
    "logits": logits.figure,
    "spikes": spikes.figure,
    "cost": cost.figure,
    "compute": compute.figure,
    "ladder": ladder.figure,
    "decisions": decisions.figure,
}

__all__ = ["FIGURES", "Context", "Plot", "make_context"]
