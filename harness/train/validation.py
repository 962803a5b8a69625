"""Validation loss (`val_loss`) on the fixed validation batches: every `val_every` steps and at the end.

Run from a callback rather than Lightning's validation loop: no sanity pass, no extra dataloader workers,
and the final evaluation happens exactly once, at the last step, however `val_every` divides `steps`.
"""

from __future__ import annotations

import math
from itertools import islice

import torch
from lightning.pytorch import Callback

from harness.train.lit import next_token_losses


class ValidationLoss(Callback):
    """Mean next-token cross-entropy over the fixed validation batches; keeps the last value for the summary."""

    def __init__(self, val_every: int, val_batches: int) -> None:
        self.val_every = val_every
        self.val_batches = val_batches
        self.last_val_loss: float | None = None
        self._last_step = -1

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if pl_module.finished_step_values() is not None and trainer.global_step % self.val_every == 0:
            self._evaluate(trainer, pl_module)

    def on_train_end(self, trainer, pl_module) -> None:
        self._evaluate(trainer, pl_module)

    @torch.no_grad()
    def _evaluate(self, trainer, pl_module) -> None:
        step = trainer.global_step
        if step == self._last_step:
            return
        self._last_step = step
        total, windows = torch.zeros((), device=pl_module.device), 0
        with trainer.precision_plugin.forward_context():
            for input_ids, targets in islice(trainer.datamodule.val_dataloader(), self.val_batches):
                logits = pl_module.model(input_ids.to(pl_module.device))  # (B, T, V)
                total += next_token_losses(logits, targets.to(pl_module.device))[0] * len(input_ids)
                windows += len(input_ids)
        value = (total / windows).item()  # mean over windows, whatever the size of the last batch
        if not math.isfinite(value):
            return  # a diverged model: its `diverged` event says so; a NaN row would poison final/best val loss
        self.last_val_loss = value
        for logger in trainer.loggers:
            logger.log_metrics({"val_loss": value}, step)
