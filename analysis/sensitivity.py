"""LR sensitivity per arm (Wortsman et al. 2023, §3.2): how much loss an arm loses away from its best LR.

    sensitivity = mean over the LR grid of  min(ℓ(η), ℓ₀) − ℓ*

ℓ(η) is the arm's mean metric over its seeds at η, a diverged run counting as ℓ₀; ℓ₀ is the loss at
initialization (the arm's runs' mean first training loss); ℓ* = min over η of ℓ(η), reached at the best LR.
Unfinished runs are left out. An arm run at a single LR has sensitivity 0 by this definition.
"""

from __future__ import annotations

import math

import pandas as pd

from analysis.frames import Sweep, initial_losses
from db.sql import quote_ident

COLUMNS = ["arm", "lrs", "best_lr", "best_loss", "initial_loss", "lr_sensitivity"]


def lr_curve(sweep: Sweep, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """Per (arm, lr): ℓ(η) with diverged runs at ℓ₀ (columns arm, lr, loss, initial_loss, n, diverged),
    and the SQL of its two inputs (the finished runs' metric, their first training loss)."""
    initial, initial_sql = initial_losses(sweep)
    runs_sql = sweep.sql(f"SELECT arm, lr, seed, run_id, status, {quote_ident(metric)} FROM sweep_runs WHERE status IN ('completed', 'diverged')")
    runs = sweep.finished.assign(initial=lambda f: f["run_id"].map(initial))
    initial_by_arm = runs.groupby("arm")["initial"].mean()
    runs = runs.assign(initial_loss=runs["arm"].map(initial_by_arm))
    completed = (runs["status"] == "completed") & runs[metric].astype(float).map(math.isfinite)
    runs = runs.assign(loss=runs[metric].astype(float).where(completed, runs["initial_loss"]))
    runs = runs.assign(loss=runs[["loss", "initial_loss"]].min(axis=1, skipna=False), diverged=~completed)
    curve = runs.groupby(["arm", "lr"], dropna=False).agg(
        loss=("loss", "mean"), initial_loss=("initial_loss", "first"), n=("loss", "size"), diverged=("diverged", "sum"),
    )
    return curve.reset_index(), [runs_sql, initial_sql]


def lr_sensitivity(sweep: Sweep, metric: str) -> tuple[pd.DataFrame, list[str]]:
    """One row per arm: the LRs it ran, its best LR and loss, ℓ₀, and its LR sensitivity."""
    curve, sql = lr_curve(sweep, metric)
    rows = []
    for arm, group in curve.groupby("arm"):
        best = group.loc[group["loss"].idxmin()] if group["loss"].notna().any() else None
        initial = group["initial_loss"].iloc[0]
        rows.append({
            "arm": arm, "lrs": len(group),
            "best_lr": best["lr"] if best is not None else math.nan,
            "best_loss": best["loss"] if best is not None else math.nan,
            "initial_loss": initial,
            "lr_sensitivity": (group["loss"].clip(upper=initial) - best["loss"]).mean() if best is not None else math.nan,
        })
    return pd.DataFrame(rows, columns=COLUMNS), sql
