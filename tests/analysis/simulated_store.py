"""Simulated tables (tests/analysis/simulations.py) written into a real store with `db.RunWriter`, and read back
through `harness compare` itself: the link between the vectorized rates and the command a user runs.

A run is written as its outcome alone: its validation loss at its last step (`final_val_loss`) and its status,
`diverged` for a +inf outcome. `compare_sweep` runs `harness compare SWEEP --sequential --format json` in this
process and returns each row's fixed-n and anytime-valid verdicts.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np

import db
from cli.main import main

STEPS = 10
BASELINE = "base"


def write_outcome(results, run_id: str, *, sweep: str, arm: str, seed: int, lr: float, value: float) -> None:
    """One finished run whose outcome is `value` (+inf: diverged at step STEPS // 2)."""
    writer = db.RunWriter.open(results, run_id, sweep=sweep, arm=arm, seed=seed, config={"lr": lr})
    if np.isinf(value):
        writer.log_metrics(STEPS // 2, {"train_loss": float("nan")})
        writer.close("diverged", diverged_at_step=STEPS // 2)
        return
    writer.log_metrics(STEPS, {"val_loss": float(value)})
    writer.close("completed")


def write_table(results, sweep: str, arm: np.ndarray, baseline: np.ndarray, lrs: int = 1) -> list[tuple[str, float]]:
    """One simulated table: `arm` and `baseline` [rows, seeds] (rows = arms × lrs, LR fastest; the baseline's runs
    at an LR written once, from its first row there). Returns the (arm, lr) of each row."""
    rows, seeds = arm.shape
    keys = [(f"arm{row // lrs}", 10.0 ** -(1 + row % lrs)) for row in range(rows)]
    for row, (name, lr) in enumerate(keys):
        for seed in range(seeds):
            write_outcome(results, f"{sweep}-{row}-{seed}", sweep=sweep, arm=name, seed=seed, lr=lr,
                          value=arm[row, seed])
    for row in range(lrs):
        for seed in range(seeds):
            write_outcome(results, f"{sweep}-b{row}-{seed}", sweep=sweep, arm=BASELINE, seed=seed, lr=keys[row][1],
                          value=baseline[row, seed])
    return keys


def compare_sweep(results, sweep: str, *extra: str) -> dict[tuple[str, float], dict]:
    """`harness compare SWEEP --sequential --format json` → (arm, lr) → its row (the baseline's left out)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["compare", sweep, "--results", str(results), "--baseline", BASELINE, "--sequential",
                     "--format", "json", *extra])
    assert code == 0
    return {(row["arm"], row["lr"]): row for row in json.loads(out.getvalue()) if row["arm"] != BASELINE}
