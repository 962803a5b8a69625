"""experiments: declare an ablation grid in Python, expand it into cells with content-hashed keys, and run
every cell exactly once on this machine (or, through the same claim protocol, on many). See docs/sweeps.md.

    from experiments import Ablation, grid
    ablation = Ablation("qk", "Does QK-norm beat soft-capping across LRs?", base="tiny",
                        grid=grid(qk_norm=["none", "rmsnorm"]), lrs=[1e-3, 1e-2], seeds=3)
"""

from experiments.declare.ablation import Ablation
from experiments.plan.cell import Cell
from experiments.plan.expand import Plan, SweepError, expand
from experiments.declare.grid import Grid, grid, zip_
from experiments.backends.layout import Layout
from experiments.declare.ladder import Ladder, ladder
from experiments.backends.slurm.launcher import SlurmLauncher
from experiments.backends.slurm.resources import SlurmResources
from experiments.declare.space import Choice, IntUniform, LogUniform, Uniform

__all__ = ["Ablation", "Cell", "Choice", "Grid", "IntUniform", "Ladder", "Layout", "LogUniform", "Plan", "SlurmLauncher",
           "SlurmResources", "SweepError", "Uniform", "expand", "grid", "ladder", "zip_"]
