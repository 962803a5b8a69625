"""`TrainConfig`: optimizer, schedule, loss terms, precision and telemetry switches of one training run.

Field names are disjoint from `ModelConfig` and `DataConfig` (a test checks it), so `--set name=value`
always names exactly one field. Torch-free like every config.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from harness.config.base import (
    ConfigBase,
    check,
    check_choice,
    check_int,
    check_positive,
    literal_options,
)

Schedule = Literal["cosine", "linear", "constant"]
WeightDecayMode = Literal["coupled", "independent"]
Precision = Literal["fp32", "bf16"]
Device = Literal["auto", "cpu", "cuda"]


@dataclass(frozen=True)
class TrainConfig(ConfigBase):
    """One training run: AdamW + warmup/decay schedule, loss terms, precision, telemetry cadence."""

    steps: int = 1000  # optimizer steps
    batch_size: int = 16  # sequences per micro-batch
    seq_len: int = 128
    grad_accum: int = 1  # micro-batches per optimizer step
    lr: float = 1e-3  # peak learning rate
    min_lr: float = 1e-5  # end of the decay (Wortsman et al. decay to 1e-5)
    warmup_steps: int = 100  # linear warmup from 0; may exceed `steps` (then the peak is never reached: a warning)
    schedule: Schedule = "cosine"
    adam_beta1: float = 0.9
    adam_beta2: float = 0.95
    adam_eps: float = 1e-8
    weight_decay: float = 0.1
    # coupled: PyTorch AdamW, θ ← θ − η·s_t·λ·θ (decay scales with the peak LR η and the schedule s_t).
    # independent ("independent decay" of Wortsman et al. 2023, after Loshchilov & Hutter): θ ← θ − s_t·λ·θ,
    # decay no longer multiplied by η but still following the schedule s_t; implemented as torch AdamW with
    # weight_decay = λ / η, whose step applies lr_t·(λ/η) = s_t·λ.
    wd_mode: WeightDecayMode = "coupled"
    no_decay_embeddings_norms_biases: bool = True
    grad_clip: float | None = 1.0  # max global grad norm; None: no clipping
    z_loss: float = 0.0  # coefficient of mean(log Z²) (PaLM uses 1e-4); 0: off
    moe_aux_coef: float = 0.01  # weight of the MoE load-balance loss (ignored by dense models)
    seed: int = 0
    precision: Precision = "fp32"  # bf16: autocast on the run's device
    compile: bool = False  # torch.compile the model
    device: Device = "auto"  # auto: cuda when available, else cpu
    flush_denormal: bool = True  # CPU only: subnormal floats made softmax-heavy steps up to 2x slower
    probe_every: int = 50  # steps between telemetry probes (attention/output logits, per-layer RMS)
    probe_seqs: int = 4  # sequences in the fixed probe batch
    val_every: int = 200  # steps between validation passes (and always at the end)
    val_seqs: int = 64  # validation windows per pass (the first ones of the fixed split; the same for any batch_size)
    spike_window: int = 128  # W: rolling window of previous values (OLMo-core 128; OLMo 2 uses 1000)
    spike_sigma: float = 6.0  # k: a spike is ≥ mean + k·σ of the window (OLMo-core 6; OLMo 2 uses 7)
    divergence_factor: float = 3.0  # loss > factor × first-step loss (or non-finite) → diverged
    checkpoint_every: int = 500  # steps between checkpoints (and always at the end)
    log_every: int = 1  # steps between per-step metric rows

    def __post_init__(self) -> None:
        self.store_floats()
        name = type(self).__name__
        for field in ("steps", "batch_size", "seq_len", "grad_accum", "probe_every", "probe_seqs", "val_every",
                      "val_seqs", "spike_window", "checkpoint_every", "log_every"):
            check_int(name, field, getattr(self, field))
        for field in ("warmup_steps", "seed"):
            check_int(name, field, getattr(self, field), minimum=0)
        for field in ("schedule", "wd_mode", "precision", "device"):
            check_choice(name, field, getattr(self, field), literal_options(type(self), field))
        for field in ("lr", "adam_eps", "spike_sigma"):
            check_positive(name, field, getattr(self, field))
        for field in ("min_lr", "weight_decay", "z_loss", "moe_aux_coef"):
            check_positive(name, field, getattr(self, field), allow_zero=True)
        for field in ("lr", "adam_eps", "weight_decay", "z_loss", "moe_aux_coef"):  # inf would only make NaN weights
            check(math.isfinite(getattr(self, field)), name, field, getattr(self, field), "must be a finite number")
        check_positive(name, "grad_clip", self.grad_clip, allow_none=True)
        check(self.min_lr <= self.lr, name, "min_lr", self.min_lr, f"must be ≤ lr={self.lr} (set min_lr lower)")
        # Independent decay is applied per step without the LR: λ = 0.1 (a usual coupled value) would shrink every
        # weight by 10% a step. Past 1e-2 (half-life ≈ 70 steps) it is a coupled value given to the wrong mode.
        check(
            self.wd_mode != "independent" or self.weight_decay <= 1e-2,
            name, "weight_decay", self.weight_decay,
            "with wd_mode='independent' it is the per-step decay s_t·λ, not multiplied by the LR: use ≤ 1e-2 "
            "(Wortsman et al. used 1e-4), or wd_mode='coupled' for AdamW's usual λ",
        )
        for field in ("adam_beta1", "adam_beta2"):
            value = getattr(self, field)
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1
            check(ok, name, field, value, "must be in [0, 1)")
        check(
            isinstance(self.divergence_factor, (int, float)) and self.divergence_factor > 1,
            name, "divergence_factor", self.divergence_factor, "must be a number > 1",
        )
        for field in ("no_decay_embeddings_norms_biases", "compile", "flush_denormal"):
            check(isinstance(getattr(self, field), bool), name, field, getattr(self, field), "must be true or false")

    def short_warmup_warning(self) -> str | None:
        """Why the schedule misses its peak, or None. warmup_steps ≥ steps is legal but rarely meant: the default
        100 warmup steps in a 50-step proxy never train at the LR the cell is labelled with (warmup reaches the
        peak at its last step, optimizer.lr_multiplier)."""
        if self.warmup_steps < self.steps:
            return None
        reach = ("reaches its peak lr only at the last step" if self.warmup_steps == self.steps else
                 f"never reaches its peak lr (at most {self.steps / self.warmup_steps:.0%} of it)")
        decay = "" if self.schedule == "constant" else f" and the {self.schedule} decay never starts"
        return (f"warmup_steps={self.warmup_steps} ≥ steps={self.steps}: the LR {reach}{decay}; set warmup_steps "
                f"below steps (e.g. --set warmup_steps={self.steps // 10}).")

    @property
    def tokens_per_step(self) -> int:
        """Tokens consumed by one optimizer step (all accumulated micro-batches)."""
        return self.batch_size * self.seq_len * self.grad_accum
