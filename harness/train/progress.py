"""Lightning's TQDM bar, told the run's length (the endless batch stream has none) and showing the loss
of the last optimizer step, read from values the telemetry already synced (no extra device sync)."""

from __future__ import annotations

from lightning.pytorch.callbacks import TQDMProgressBar


class StepProgressBar(TQDMProgressBar):
    """One tick per micro-batch up to steps × grad_accum; postfix: train loss and grad norm."""

    def __init__(self, total_batches: int) -> None:
        super().__init__()
        self.total_batches = total_batches

    def on_train_epoch_start(self, trainer, *_) -> None:
        super().on_train_epoch_start(trainer)
        done = trainer.global_step * trainer.accumulate_grad_batches
        self.train_progress_bar.reset(total=self.total_batches)
        self.train_progress_bar.initial = done
        self.train_progress_bar.set_description("train")

    def get_metrics(self, trainer, pl_module) -> dict:
        values = pl_module.last_step_values
        if values is None:
            return {}
        return {"loss": f"{values['train_loss']:.4f}", "grad_norm": f"{values['grad_norm']:.3g}"}
