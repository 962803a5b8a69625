"""experiments: declare an ablation grid in Python, expand it into cells with content-hashed keys, and run
every cell exactly once on this machine (or, through the same claim protocol, on many). See docs/sweeps.md.

    from experiments import Ablation, grid
    ablation = Ablation("qk", "Does QK-norm beat soft-capping across LRs?", base="tiny",
                        grid=grid(qk_norm=["none", "rmsnorm"]), lrs=[1e-3, 1e-2], seeds=3)

The names below load on first use: every `harness` command builds its parser from light modules of this package
(the workers' option defaults, the layout), which an eager import here would make pay for the planner and db.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from experiments.backends.layout import Layout
    from experiments.backends.slurm.launcher import SlurmLauncher
    from experiments.backends.slurm.resources import SlurmResources
    from experiments.declare.ablation import Ablation
    from experiments.declare.grid import Grid, grid, zip_
    from experiments.declare.ladder import Ladder, ladder
    from experiments.declare.space import Choice, IntUniform, LogUniform, Uniform
    from experiments.plan.cell import Cell
    from experiments.plan.expand import Plan, SweepError, expand

_HOMES = {
    "Ablation": "experiments.declare.ablation", "Cell": "experiments.plan.cell", "Plan": "experiments.plan.expand",
    "SweepError": "experiments.plan.expand", "expand": "experiments.plan.expand", "Grid": "experiments.declare.grid",
    "grid": "experiments.declare.grid", "zip_": "experiments.declare.grid", "Layout": "experiments.backends.layout",
    "Ladder": "experiments.declare.ladder", "ladder": "experiments.declare.ladder",
    "SlurmLauncher": "experiments.backends.slurm.launcher", "SlurmResources": "experiments.backends.slurm.resources",
    "Choice": "experiments.declare.space", "IntUniform": "experiments.declare.space",
    "LogUniform": "experiments.declare.space", "Uniform": "experiments.declare.space",
}

__all__ = ["Ablation", "Cell", "Choice", "Grid", "IntUniform", "Ladder", "Layout", "LogUniform", "Plan",
           "SlurmLauncher", "SlurmResources", "SweepError", "Uniform", "expand", "grid", "ladder", "zip_"]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module 'experiments' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value  # once: later lookups find it without this function
    return value
