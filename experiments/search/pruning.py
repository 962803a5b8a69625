"""Pruning a search trial on its validation loss: our own Lightning callback, because validation runs in
the `ValidationLoss` callback rather than Lightning's loop, which optuna-integration's callback watches."""

from __future__ import annotations

from lightning.pytorch import Callback

from harness.train.validation import ValidationLoss


class PruneOnValidation(Callback):
    """Reports each new validation loss to the trial; when the pruner says so, the run stops as `pruned`."""

    def __init__(self, trial) -> None:
        self.trial = trial
        self._reported = -1

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        validation = next(c for c in trainer.callbacks if isinstance(c, ValidationLoss))
        step = trainer.global_step
        if validation.last_val_loss is None or validation.last_step != step or step == self._reported:
            return
        self._reported = step
        self.trial.report(validation.last_val_loss, step)
        if step < trainer.max_steps and self.trial.should_prune():
            for logger in trainer.loggers:
                if hasattr(logger, "pruned_at_step"):
                    logger.pruned_at_step = step
            trainer.should_stop = True
