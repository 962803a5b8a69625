"""Per-step telemetry: loss, z-loss (when on), MoE aux loss (MoE models), grad norm (pre-clip), LR, tokens
seen, step time; and once per fresh run the loss at initialization, `initial_loss` at step 0.

Costs one host sync per optimizer step (the `.tolist()` inside `finished_step_values`, which the spike and
divergence callbacks share) and nothing else on the device.
"""

from __future__ import annotations

import time
from typing import Any

from lightning.pytorch import Callback


class StepTelemetry(Callback):
    """Writes the per-step metrics to every logger each `log_every` steps and at the step training stops
    (the last, or a diverged one); keeps totals for the summary.

    `initial_loss` is optimizer step 1's training loss (the mean over its micro-batches), computed before the
    first update, so with the initial weights: ℓ₀ of the LR sensitivity and a diverged trial's value. It is
    written at step 0 whatever `log_every` is (the first *logged* loss at log_every=50 was ~1 nat lower), and
    kept in the callback's state so a resumed segment's summary still has it without logging it again."""

    def __init__(self, tokens_per_step: int, log_every: int, log_z_loss: bool, log_aux_loss: bool) -> None:
        self.tokens_per_step = tokens_per_step
        self.log_every = log_every
        self.unused_terms = [name for name, used in (("z_loss", log_z_loss), ("aux_loss", log_aux_loss)) if not used]
        self.last_values: dict[str, float] | None = None
        self.initial_loss: float | None = None
        self.train_seconds = 0.0  # summed step times (what tokens/s is measured over)
        self.steps_timed = 0
        self.first_step_at: float | None = None  # wall clock (epoch seconds) when this process began training
        self._step_started: float | None = None

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx) -> None:
        if self._step_started is None:
            self._step_started = time.perf_counter()
        if self.first_step_at is None:
            self.first_step_at = time.time()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        values = pl_module.finished_step_values()
        if values is None:
            return
        assert self._step_started is not None  # a finished step started
        step_time = time.perf_counter() - self._step_started
        self._step_started = None
        self.train_seconds += step_time
        self.steps_timed += 1
        step = trainer.global_step
        if step == 1 and self.initial_loss is None:  # step 1 only: a resumed segment starts later, with it restored
            self.initial_loss = values["train_loss"]
            for logger in trainer.loggers:
                logger.log_metrics({"initial_loss": self.initial_loss}, 0)
        metrics = {**values, "tokens": step * self.tokens_per_step, "step_time": step_time}
        for name in self.unused_terms:  # z-loss off or a dense model: the term is not computed
            del metrics[name]
        self.last_values = metrics
        if step % self.log_every == 0 or step == trainer.max_steps or trainer.should_stop:  # the last step always
            for logger in trainer.loggers:
                logger.log_metrics(metrics, step)

    def state_dict(self) -> dict[str, Any]:
        return {"initial_loss": self.initial_loss}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.initial_loss = state_dict.get("initial_loss")  # absent in checkpoints written before it existed

    @property
    def tokens_per_second(self) -> float:
        """Training throughput over the timed steps of this process (probes and validation excluded)."""
        return self.steps_timed * self.tokens_per_step / self.train_seconds if self.train_seconds else 0.0
