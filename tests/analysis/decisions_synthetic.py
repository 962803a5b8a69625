"""Ladders of planted decisions, written through the real `db.RunWriter` (tests of `harness decisions`) or drawn as
runs in memory (tests/analysis/decisions_simulation.py).

A decision's sweep has two variants, `first` and `second`; at each rung the second's true loss is the first's plus
a planted difference (negative: the second is better). Each seed's runs share a per-(rung, seed) offset, as seed i
of every arm shares its data order, and each run adds its own noise. Arms are named as a planned ladder names them,
`<variant>@<rung label>`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

import ladder_synthetic as synthetic
from analysis.ladder.decision_runs import COLUMNS, DecisionRuns

BASE_LOSS = 3.0  # the first variant's loss at every rung (only differences matter)
VARIANTS = ("first", "second")


def draw(rng: np.random.Generator, gaps: list[float], seeds: int, noise: float, shared: float = 0.05) -> np.ndarray:
    """[2, R, S] losses of the first and second variant at each rung: the planted `gaps` (second − first)."""
    rungs = len(gaps)
    offset = rng.normal(0, shared, (1, rungs, seeds))
    truth = np.stack([np.zeros(rungs), np.asarray(gaps, dtype=float)])[..., None]
    return BASE_LOSS + truth + offset + rng.normal(0, noise, (2, rungs, seeds))


def write_decision(results, sweep: str, gaps: list[float], rungs: list, *, seeds: int = 3, noise: float = 0.01,
                   rng_seed: int = 0, diverged=(), deeper: bool = False) -> np.ndarray:
    """One decision's ladder in the store; `diverged`: (variant index, rung index, seed) runs that diverge; `deeper`:
    the second variant's runs have twice the rung's layers (as the depth decision's arm), under the same rung name.
    Returns the planted-plus-noise losses [2, R, S]."""
    losses = draw(np.random.default_rng(rng_seed), gaps, seeds, noise)
    for v, variant in enumerate(VARIANTS):
        for r, rung in enumerate(rungs):
            config = replace(rung, n_layers=2 * rung.n_layers) if deeper and v == 1 else rung
            for seed in range(seeds):
                synthetic._write_run(results, f"{sweep}-{v}-{r}-{seed}", sweep, f"{variant}@{rung.label}", seed, 1e-3,
                                     config, losses[v, r, seed], (v, r, seed) in diverged)
    return losses


def runs_in_memory(all_gaps: list[list[float]], rungs: list, rng: np.random.Generator, seeds: int,
                   noise: float) -> DecisionRuns:
    """`DecisionRuns` of one two-variant sweep per entry of `all_gaps`, drawn without a store (for simulations)."""
    rows = []
    for k, gaps in enumerate(all_gaps):
        losses = draw(rng, gaps, seeds, noise)
        for v, variant in enumerate(VARIANTS):
            for r, rung in enumerate(rungs):
                rows += [(f"d{k}", variant, rung.label, 1e-3, seed, "completed", losses[v, r, seed], losses[v, r, seed],
                          rung.compute, rung.params) for seed in range(seeds)]
    runs = pd.DataFrame(rows, columns=COLUMNS)
    return DecisionRuns(runs, [rung.label for rung in rungs], {f"d{k}": list(VARIANTS) for k in range(len(all_gaps))})
