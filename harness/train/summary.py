"""The closing summary of a run: gathered from the telemetry callbacks when training ends, stored with the
run's status in the results store and printed by `harness run`."""

from __future__ import annotations

import math
from typing import Any

from lightning.pytorch import Callback

from harness.train.divergence import DivergenceMonitor
from harness.train.probes import ProbeTelemetry
from harness.train.spikes import SpikeMonitor
from harness.train.telemetry import StepTelemetry
from harness.train.validation import ValidationLoss


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def attention_kernels(paths: list[str]) -> str:
    """The per-layer attention kernels, each named once: 'sdpa' when every layer agrees, else with counts
    ('eager×2, sdpa×2'). The per-layer list is in the run's `probe_setup` event."""
    counts = {path: paths.count(path) for path in paths}
    return next(iter(counts)) if len(counts) == 1 else ", ".join(f"{path}×{n}" for path, n in counts.items())


class RunSummary(Callback):
    """Builds `summary` at train end (after the final validation) and hands it to loggers that keep one."""

    def __init__(
        self,
        steps: StepTelemetry,
        probes: ProbeTelemetry,
        spikes: SpikeMonitor,
        divergence: DivergenceMonitor,
        validation: ValidationLoss,
    ) -> None:
        self.steps, self.probes, self.spikes = steps, probes, spikes
        self.divergence, self.validation = divergence, validation
        self.summary: dict[str, Any] = {}

    def on_train_end(self, trainer, pl_module) -> None:
        last = self.steps.last_values or {}
        self.summary = {
            "status": "diverged" if self.divergence.diverged_at_step is not None else "completed",
            "diverged_at_step": self.divergence.diverged_at_step,
            "steps": trainer.global_step,
            "initial_loss": _finite_or_none(self.steps.initial_loss),
            "final_train_loss": last.get("train_loss"),
            "val_loss": self.validation.last_val_loss,
            **self.spikes.spike_counts(),
            **self.spikes.scores(),
            "max_attention_logit": _finite_or_none(self.probes.max_attention_logit),
            "max_output_logit": _finite_or_none(self.probes.max_output_logit),
            "params": sum(p.numel() for p in pl_module.model.parameters()),
            "tokens": last.get("tokens"),
            "tokens_per_second": self.steps.tokens_per_second,
            "probe_seconds": self.probes.probe_seconds,
            "train_seconds": self.steps.train_seconds,
            "first_step_at": self.steps.first_step_at,
            "attention_paths": attention_kernels(pl_module.model.attention_paths),
            # Fewer than vocab_size when the corpus ran out of merges: the embedding rows above it never train.
            "tokenizer_vocab_size": trainer.datamodule.data.tokenizer_vocab_size,
        }
        for logger in trainer.loggers:
            if hasattr(logger, "summary"):
                logger.summary = dict(self.summary)
