"""LR sensitivity per arm (Wortsman et al. 2023, §2.2): how much loss an arm loses away from its best LR.

    sensitivity = mean over the LR grid of  min(ℓ(η), ℓ₀) − ℓ*

ℓ(η) is the arm's mean over its seeds at η of each run's ℓ: its metric when it completed
(`analysis.reading.outcomes`), ℓ₀ when it diverged or ended worse than ℓ₀; ℓ₀ is the loss at initialization (the
mean over the arm's runs of `analysis.reading.frames.initial_losses`); ℓ* = min over η of ℓ(η), reached at the
arm's best LR. Runs without an outcome are left out. An arm run at a single LR has sensitivity 0.
The same ℓ of each run chooses the best LR everywhere (the summary, the figures, the scale comparison).
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.reading.frames import Sweep, initial_losses
from analysis.reading.outcomes import COMPLETED, DIVERGED, outcome_sql
from db.sql import quote_ident

COLUMNS = ["arm", "lrs", "best_lr", "best_loss", "initial_loss", "initial_loss_from", "lr_sensitivity"]
MIXED = "mixed"  # an arm whose runs have ℓ₀ from different sources


def run_losses(sweep: Sweep, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per run with an outcome on `metric`: arm, lr, seed, run_id, outcome, value (the metric),
    diverged, initial_loss and initial_from (the arm's ℓ₀ and its source), loss (the run's ℓ); and the SQL of
    its two inputs."""
    initial, initial_sql = initial_losses(sweep)
    runs, runs_sql = sweep.frame(
        f"SELECT arm, lr, seed, run_id, {outcome_sql(metric)} AS outcome, {quote_ident(metric)} AS value "
        "FROM sweep_runs WHERE outcome IS NOT NULL"
    )
    runs["lr"] = pd.to_numeric(runs["lr"], errors="coerce")
    runs = runs.join(initial, on="run_id")
    by_arm = runs.groupby("arm")
    sources = by_arm["initial_from"].agg(lambda found: found.iloc[0] if found.nunique() == 1 else MIXED)
    runs = runs.assign(initial_loss=runs["arm"].map(by_arm["initial_loss"].mean()),
                       initial_from=runs["arm"].map(sources), diverged=runs["outcome"] == DIVERGED)
    loss = runs["value"].astype(float).where(runs["outcome"] == COMPLETED, runs["initial_loss"])
    runs["loss"] = pd.concat([loss, runs["initial_loss"]], axis=1).min(axis=1, skipna=False)
    return runs, [runs_sql, initial_sql]


def lr_curve(sweep: Sweep, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """Per (arm, lr): ℓ(η) (columns arm, lr, loss, initial_loss, initial_from, n, diverged) and its SQL."""
    runs, sql = run_losses(sweep, metric)
    curve = runs.groupby(["arm", "lr"], dropna=False).agg(
        loss=("loss", "mean"), initial_loss=("initial_loss", "first"), initial_from=("initial_from", "first"),
        n=("loss", "size"), diverged=("diverged", "sum"),
    )
    return curve.reset_index(), sql


def lr_sensitivity(sweep: Sweep, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per arm: the LRs it ran, its best LR and loss, ℓ₀ and its source, and its LR sensitivity."""
    curve, sql = lr_curve(sweep, metric)
    rows = []
    for arm, group in curve.groupby("arm"):
        best = group.loc[group["loss"].idxmin()] if group["loss"].notna().any() else None
        initial = group["initial_loss"].iloc[0]
        rows.append({
            "arm": arm, "lrs": len(group),
            "best_lr": best["lr"] if best is not None else math.nan,
            "best_loss": best["loss"] if best is not None else math.nan,
            "initial_loss": initial, "initial_loss_from": group["initial_from"].iloc[0],
            "lr_sensitivity": ((group["loss"].clip(upper=initial) - best["loss"]).mean() if best is not None
                               else math.nan),
        })
    return pd.DataFrame(rows, columns=COLUMNS), sql
