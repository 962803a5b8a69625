"""A small real store written through `db.RunWriter`, and what each exported run must hold, from what was written.

Sweep `exp`: arms `base` and `qk/norm` (a '/' that no directory name may hold) × seeds 0, 1, a `failed` run,
and `qk/norm` seed 1 diverging at step 6 (a NaN loss there). Every run logs step metrics at steps 0-9
(validation at 0, 5, 9, or until it stopped), and at probe steps 0, 5, 9 the step metric `attn_logit_max` plus
the per-layer-and-head `attn_logit_max` and the per-layer `param_rms` (2 layers, 2 heads). Values are random
floats. Sweep `other` holds one run that no export of `exp` may carry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

import db

SWEEP = "exp"
STEPS, PROBES, VALIDATIONS = range(10), (0, 5, 9), (0, 5, 9)
LAYERS, HEADS = 2, 2
DIVERGED_AT = 6
# run id: (arm, seed, lr, how it ends)
RUNS = {
    "base-0": ("base", 0, 1e-3, "completed"),
    "base-1": ("base", 1, 1e-3, "completed"),
    "qk-0": ("qk/norm", 0, 1e-3, "completed"),
    "qk-1": ("qk/norm", 1, 3e-3, "diverged"),
    "base-2": ("base", 2, 1e-3, "failed"),
}


@dataclass
class PlantedRun:
    """One run as written: the oracle of every export test."""

    run_id: str
    arm: str
    seed: int
    lr: float
    status: str
    config: dict  # as written, None values included
    metrics: dict = field(default_factory=dict)  # name → {step: value}
    layers: dict = field(default_factory=dict)  # (name, layer, head or None) → {step: value}

    @property
    def last_step(self) -> int:
        return max(step for series in self.metrics.values() for step in series)

    def series(self, separator: str = "/") -> dict[str, dict[int, float]]:
        """Every series by the name the export docs give it: `name`, `name/layer_L`, `name/layer_L/head_H`."""
        named = dict(self.metrics)
        for (name, layer, head), values in self.layers.items():
            parts = [name, f"layer_{layer}"] + ([f"head_{head}"] if head is not None else [])
            named[separator.join(parts)] = values
        return named

    def summary(self) -> dict:
        """The verdict-relevant summary, NULLs left out."""
        val = self.metrics["val_loss"]
        summary = {"sweep": SWEEP, "arm": self.arm, "seed": self.seed, "lr": self.lr, "status": self.status,
                   "final_val_loss": val[max(val)], "best_val_loss": min(val.values()),
                   "diverged_at_step": DIVERGED_AT if self.status == "diverged" else None,
                   "last_step": self.last_step, "run_id": self.run_id}
        return {key: value for key, value in summary.items() if value is not None}

    def exported_config(self) -> dict:
        return {key: value for key, value in self.config.items() if value is not None}


def _write(results, run: PlantedRun, sweep: str, rng) -> None:
    writer = db.RunWriter.open(results, run.run_id, sweep=sweep, arm=run.arm, seed=run.seed, config=run.config)
    last = DIVERGED_AT if run.status == "diverged" else STEPS[-1]
    for step in range(last + 1):
        diverging = run.status == "diverged" and step == DIVERGED_AT
        values = {"train_loss": math.nan if diverging else float(rng.uniform(2, 9)),
                  "lr": run.lr * (step + 1) / 10, "grad_norm": float(rng.uniform(0.1, 3))}
        if step in VALIDATIONS or step == last:
            values["val_loss"] = float(rng.uniform(2, 9))
        if step in PROBES or step == last:
            logits = rng.uniform(1, 50, size=(LAYERS, HEADS))
            rms = rng.uniform(0.01, 1, size=LAYERS)
            values["attn_logit_max"] = float(logits.max())
            writer.log_layer_metrics(step, "attn_logit_max", logits)
            writer.log_layer_metrics(step, "param_rms", rms)
            for layer in range(LAYERS):
                run.layers.setdefault(("param_rms", layer, None), {})[step] = float(rms[layer])
                for head in range(HEADS):
                    run.layers.setdefault(("attn_logit_max", layer, head), {})[step] = float(logits[layer, head])
        writer.log_metrics(step, values)
        for name, value in values.items():
            run.metrics.setdefault(name, {})[step] = value
    if run.status == "diverged":
        writer.close("diverged", diverged_at_step=DIVERGED_AT)
    else:
        writer.close(run.status)


def write_store(results) -> dict[str, PlantedRun]:
    """Write sweep `exp` (and sweep `other`) into `results`; the runs of `exp` by run id."""
    rng = np.random.default_rng(26)
    planted = {}
    for run_id, (arm, seed, lr, status) in RUNS.items():
        config = {"d_model": 64, "n_layers": LAYERS, "lr": lr, "seed": seed, "qk_norm": "rmsnorm" if arm != "base" else
                  "none", "tie_embeddings": True, "attn_softcap": None, "max_chars": None}
        planted[run_id] = PlantedRun(run_id, arm, seed, lr, status, config)
        _write(results, planted[run_id], SWEEP, rng)
    _write(results, PlantedRun("stranger", "base", 0, 1e-3, "completed", {"lr": 1e-3}), "other", rng)
    return planted
