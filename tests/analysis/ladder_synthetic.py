"""Synthetic ladders written through the real `db.RunWriter` from known curves, and drawn as arrays for the
simulations (tests/analysis/ladder_simulation.py).

Each run's final validation loss is its variant's planted L(C) = E + A·C^-α at the run's compute, plus noise;
its compute is what analysis reads back, `flops_per_token` × its last `tokens`. Arms are named as a planned
ladder names them, `<variant>@d_model=…,n_layers=…`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import db

TOKENS_PER_STEP = 4096
STEPS = 4  # logged steps per run: the last one carries the planted loss


@dataclass(frozen=True)
class Rung:
    """One size: its rung fields, parameters and training FLOPs per token, and the tokens it trains."""

    d_model: int
    n_layers: int
    params: int
    flops_per_token: float
    tokens: int

    @property
    def compute(self) -> float:
        return self.flops_per_token * self.tokens

    @property
    def label(self) -> str:
        return f"d_model={self.d_model},n_layers={self.n_layers}"


def chinchilla_rungs(n: int, first_params: int = 200_000, growth: float = 2.0,
                     tokens_per_param: int = 20) -> list[Rung]:
    """n rungs, each `growth`× the parameters of the last, trained on tokens_per_param × params tokens
    (compute grows by growth² a rung); FLOPs per token = 6 × params."""
    rungs = []
    for i in range(n):
        params = int(first_params * growth ** i)
        tokens = (tokens_per_param * params) // TOKENS_PER_STEP * TOKENS_PER_STEP
        rungs.append(Rung(64 * 2 ** i, 2 + i, params, 6.0 * params, tokens))
    return rungs


def planted_loss(curve: tuple[float, float, float], c) -> np.ndarray:
    """E + A·c^-α."""
    e, a, alpha = curve
    return e + a * np.asarray(c, dtype=float) ** -alpha


def draw_losses(rng: np.random.Generator, curves: list[tuple], rungs: list[Rung], seeds: int, noise: float,
                shared: float = 0.0) -> np.ndarray:
    """[V, R, S] planted losses plus run noise (sd `noise`) and, with `shared`, a per (rung, seed) offset that
    every variant shares (seed i of every arm at a rung has the same data order and initialization stream)."""
    compute = np.array([rung.compute for rung in rungs])
    truth = np.array([planted_loss(curve, compute) for curve in curves])  # [V, R]
    common = rng.normal(0, shared, (1, len(rungs), seeds)) if shared else 0.0
    return truth[..., None] + common + rng.normal(0, noise, (len(curves), len(rungs), seeds))


def write_ladder(results, sweep: str, variants: dict[str, tuple[float, float, float]], rungs: list[Rung], *,
                 seeds: int = 4, noise: float = 0.01, shared: float = 0.0, rng_seed: int = 0, diverged=(),
                 lrs=(1e-3,)) -> np.ndarray:
    """Runs of every variant at every rung, LR and seed; returns the planted-plus-noise losses [V, R, S] (at the
    first LR: others are planted 0.05 worse per step along `lrs`). `diverged`: (variant, rung index, seed) runs
    that diverge instead."""
    losses = draw_losses(np.random.default_rng(rng_seed), list(variants.values()), rungs, seeds, noise, shared)
    for v, variant in enumerate(variants):
        for r, rung in enumerate(rungs):
            for i, lr in enumerate(lrs):
                for seed in range(seeds):
                    gone = (variant, r, seed) in diverged
                    _write_run(results, f"{sweep}-{v}-{r}-{i}-{seed}", sweep, f"{variant}@{rung.label}", seed, lr, rung,
                               losses[v, r, seed] + 0.05 * i, gone)
    return losses


def _write_run(results, run_id: str, sweep: str, arm: str, seed: int, lr: float, rung: Rung, final: float,
               gone: bool) -> None:
    config = {"d_model": rung.d_model, "n_layers": rung.n_layers, "lr": lr}
    writer = db.RunWriter.open(results, run_id, sweep=sweep, arm=arm, seed=seed, config=config, params=rung.params,
                               flops_per_token=rung.flops_per_token)
    per_step = rung.tokens // STEPS
    writer.log_metrics(0, {"initial_loss": final + 3.0})
    for step in range(1, STEPS + 1):
        loss = float("nan") if gone and step == 2 else final + (STEPS - step) * 0.5
        writer.log_metrics(step, {"train_loss": loss, "tokens": step * per_step, "val_loss": loss})
        if gone and step == 2:
            writer.close("diverged", diverged_at_step=step)
            return
    writer.close("completed")
