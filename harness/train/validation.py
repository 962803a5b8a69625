"""Validation loss (`val_loss`) on the first `val_seqs` windows of the fixed validation split: every `val_every`
steps and at the end. A number of windows, not of batches, so arms that differ in batch size are scored on
the same text.

Run from a callback rather than Lightning's validation loop: no sanity pass, no extra dataloader workers,
and the final evaluation happens exactly once, at the last step, however `val_every` divides `steps`.
"""

from __future__ import annotations

import math

import torch
from lightning.pytorch import Callback

from harness.train.lit import next_token_losses


class ValidationLoss(Callback):
    """Mean next-token cross-entropy over the first `val_seqs` validation windows (all of them if the split holds
    fewer), fed `batch_size` at a time; keeps the last value for the summary."""

    def __init__(self, val_every: int, val_seqs: int) -> None:
        self.val_every = val_every
        self.val_seqs = val_seqs
        self.last_val_loss: float | None = None
        self.last_step = -1  # the step last evaluated (a search's pruner reports only fresh values)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if pl_module.finished_step_values() is not None and trainer.global_step % self.val_every == 0:
            self._evaluate(trainer, pl_module)

    def on_train_end(self, trainer, pl_module) -> None:
        self._evaluate(trainer, pl_module)

    @torch.no_grad()
    def _evaluate(self, trainer, pl_module) -> None:
        step = trainer.global_step
        if step == self.last_step:
            return
        self.last_step = step
        total, windows = torch.zeros((), device=pl_module.device), 0
        with trainer.precision_plugin.forward_context():
            for input_ids, targets in trainer.datamodule.val_dataloader():
                input_ids, targets = input_ids[: self.val_seqs - windows], targets[: self.val_seqs - windows]  # (B, T)
                logits = pl_module.model(input_ids.to(pl_module.device))  # (B, T, V)
                total += next_token_losses(logits, targets.to(pl_module.device))[0] * len(input_ids)
                windows += len(input_ids)
                if windows == self.val_seqs:
                    break
        value = (total / windows).item()  # mean over windows, whatever the size of the last batch
        if not math.isfinite(value):
            return  # a diverged model: its `diverged` event says so; a NaN row would poison final/best val loss
        self.last_val_loss = value
        for logger in trainer.loggers:
            logger.log_metrics({"val_loss": value}, step)
