"""Synthetic sweeps written through the real `db.RunWriter`, with effects planted where tests can see them.

A run's validation loss decays from `INITIAL_LOSS` to exactly its planted final value at its last step, so
`final_val_loss` in the `runs` view is the planted number. Used by tests/analysis and benchmarks/bench_analysis.py.
"""

from __future__ import annotations

import math

import numpy as np

import db

INITIAL_LOSS = 8.3  # ≈ ln(4096): what a fresh model's loss starts at
BASE_LOSS = 3.0
TOKENS_PER_STEP = 2048
FLOPS_PER_TOKEN = 6.0e6
FLOOR = math.exp(-5)

# The tests' planted sweep. arm: (planted effect in nats, per-run noise, seeds)
PLANTED = {
    "baseline": (0.0, 0.003, 6),
    "better": (-0.10, 0.003, 6),
    "worse": (0.08, 0.003, 6),
    "null": (0.0, 0.03, 6),
    "tiny": (0.002, 0.003, 6),
    "single": (-0.05, 0.003, 1),
    "unstable": (0.05, 0.003, 6),
}
DIVERGED = {("unstable", 1e-3, 1): 30, ("unstable", 1e-3, 4): 42}


def write_run(
    results, run_id: str, *, sweep: str, arm: str, seed: int, lr: float | None, final: float, steps: int = 60,
    diverge_at: int | None = None, val_every: int = 10, probe_every: int = 10, layers: int = 2, heads: int = 2,
    config: dict | None = None, logit_growth: float = 1.0, spikes: tuple[int, ...] = (),
    status: str | None = "completed", last_val: float | None = None, log_every: int = 1,
    initial_loss: float | None = None, summary: dict | None = None, provenance: dict | None = None,
) -> None:
    """One run with full step histories: train/val loss, grad norm, lr, tokens, step time, probes, spikes.

    `diverge_at` stops it there with a NaN loss and status `diverged`; `status=None` leaves it running;
    `last_val` replaces the last validation loss (a NaN one: a completed run with a non-finite metric);
    `log_every` logs the per-step metrics only every so many steps (spikes are still judged, and recorded as
    events, at every step); `initial_loss` is logged as the metric `initial_loss` at step 0 (training's ℓ₀);
    `summary` is closed with the run; `provenance` is the segment's (db/provenance.py's columns).
    """
    config = {"d_model": 64, "n_layers": layers, **({"lr": lr} if lr is not None else {}), **(config or {})}
    writer = db.RunWriter.open(results, run_id, sweep=sweep, arm=arm, seed=seed, config=config,
                               params=100_000 * layers, flops_per_token=FLOPS_PER_TOKEN * layers / 2,
                               provenance=provenance)
    last = steps - 1 if diverge_at is None else diverge_at
    for step in range(last + 1):
        decay = (math.exp(-5 * step / (steps - 1)) - FLOOR) / (1 - FLOOR)  # 1 at step 0, exactly 0 at the end
        loss = final + (INITIAL_LOSS - final) * decay
        if step == diverge_at:
            loss = math.nan
        values = {"train_loss": loss + 0.02, "grad_norm": 1.0 + decay, "lr": lr or 1e-3,
                  "tokens": step * TOKENS_PER_STEP, "step_time": 0.01}
        if step % log_every == 0 or step == last:
            writer.log_metrics(step, values)
        if step == 0 and initial_loss is not None:
            writer.log_metrics(0, {"initial_loss": initial_loss})
        if step in spikes:
            writer.log_event(step, "loss_spike", value=loss + 1.0, detail="planted")
        if step % val_every == 0 or step == steps - 1:
            writer.log_metrics(step, {"val_loss": last_val if step == steps - 1 and last_val is not None else loss})
        if step % probe_every == 0 or step == last:
            growth = logit_growth ** (step / (steps - 1))
            logits = [[5.0 * growth * (1 + layer) + head for head in range(heads)] for layer in range(layers)]
            writer.log_layer_metrics(step, "attn_logit_max", logits)
            writer.log_metrics(step, {"attn_logit_max": float(np.max(logits)), "output_logit_max_abs": 10.0 * growth,
                                      "output_log_z_mean": 8.0 + math.log(growth)})
    if diverge_at is not None:
        writer.log_event(diverge_at, "diverged", detail="planted")
        writer.close("diverged", diverged_at_step=diverge_at, summary=summary)
    elif status is not None:
        writer.close(status, summary=summary)
    else:
        writer.flush()


def write_planted(
    results, sweep: str, arms: dict[str, tuple[float, float, int]], *, lrs=(None,), lr_penalty=None,
    seed_spread: float = 0.05, diverged: dict | None = None, rng_seed: int = 0, **run_options,
) -> dict[tuple[str, float | None, int], float]:
    """Runs for `arms` = {arm: (effect, noise, n_seeds)} at each LR; returns the planted finals by (arm, lr, seed).

    final = BASE_LOSS + effect + lr_penalty(lr) + a per-seed offset shared by all arms (what pairing removes)
    + per-run noise. `diverged` = {(arm, lr, seed): step} makes those runs diverge at that step.
    """
    rng = np.random.default_rng(rng_seed)
    n_seeds = max(n for _, _, n in arms.values())
    offsets = rng.normal(0, seed_spread, n_seeds)
    diverged = diverged or {}
    planted = {}
    for index, (arm, (effect, noise, seeds)) in enumerate(arms.items()):
        for lr in lrs:
            for seed in range(seeds):
                final = (BASE_LOSS + effect + (lr_penalty(lr) if lr_penalty else 0.0) + offsets[seed]
                         + rng.normal(0, noise))
                key = (arm, lr, seed)
                run_id = f"{sweep}-{index}-{lr}-{seed}"  # by the arm's index: arm names may hold any character
                write_run(results, run_id, sweep=sweep, arm=arm, seed=seed, lr=lr, final=final,
                          diverge_at=diverged.get(key), **run_options)
                planted[key] = final
    return planted
