"""Divergence: a non-finite loss or grad norm, or a loss above `factor` × the run's first loss, ends the run as a
result.

The run stops cleanly (`trainer.should_stop`), a `diverged` event records the step, and the results logger
closes the run with status `diverged` at that step: data about the arm, not a crash to retry.
"""

from __future__ import annotations

import math
from typing import Any

from lightning.pytorch import Callback

from harness.train.records import record_event


class DivergenceMonitor(Callback):
    """Stops training at the first diverged step; `diverged_at_step` is None while the run is healthy."""

    def __init__(self, factor: float) -> None:
        self.factor = factor
        self.initial_loss: float | None = None
        self.diverged_at_step: int | None = None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        values = pl_module.finished_step_values()
        if values is None or self.diverged_at_step is not None:
            return
        loss, grad_norm = values["train_loss"], values["grad_norm"]
        if self.initial_loss is None and math.isfinite(loss):
            self.initial_loss = loss
        if not math.isfinite(loss):
            reason = f"loss is {loss}"
        elif not math.isfinite(grad_norm):
            # The step's update already made the weights non-finite; the loss would only show it a step later.
            reason = f"grad norm is {grad_norm}"
        elif self.initial_loss is not None and loss > self.factor * self.initial_loss:  # set above when finite
            reason = f"loss {loss:.4g} > {self.factor:g} × first loss {self.initial_loss:.4g}"
        else:
            return
        self.diverged_at_step = trainer.global_step
        record_event(trainer, self.diverged_at_step, "diverged", loss, reason)
        trainer.should_stop = True

    def state_dict(self) -> dict[str, Any]:
        return {"initial_loss": self.initial_loss}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.initial_loss = state_dict["initial_loss"]
