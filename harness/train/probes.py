"""Probe-step telemetry: every `probe_every` steps (and at the last step) on the fixed probe batch.

Records the `probe_signals` of the model plus per-layer parameter, gradient and update RMS (a run that
stops early, i.e. diverges, is also probed where it stopped, without gradient and update). The update is
exact and cheap: on the probe step only, the parameters are copied just before the optimizer step, and the
update is their change across that one step. The gradient RMS is of the accumulated gradient before
clipping. Nothing here runs on other steps.
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch
from lightning.pytorch import Callback

from harness.train.layer_rms import LayerGroups, local
from harness.train.probe_signals import probe_signals
from harness.train.records import record_event, record_layer_metrics


class ProbeTelemetry(Callback):
    """Probe-step signals; keeps the run's largest attention and output logits for the summary."""

    def __init__(self, probe_every: int, probe_seqs: int, total_steps: int) -> None:
        self.probe_every = probe_every
        self.probe_seqs = probe_seqs
        self.total_steps = total_steps
        self.max_attention_logit = -math.inf
        self.max_output_logit = -math.inf
        self.probe_seconds = 0.0
        self._probed_step = -1
        self._groups: LayerGroups | None = None
        self._probe_ids: torch.Tensor | None = None
        self._before_step: list[torch.Tensor] | None = None
        self._grad_rms: tuple[torch.Tensor, dict[str, torch.Tensor]] | None = None

    @property
    def groups(self) -> LayerGroups:
        """The model's parameters by layer, from `on_train_start` on."""
        assert self._groups is not None, "on_train_start runs first"
        return self._groups

    def is_probe_step(self, step: int) -> bool:
        """Whether the optimizer step numbered `step` (1-based) is probed."""
        return step % self.probe_every == 0 or step == self.total_steps

    def on_train_start(self, trainer, pl_module) -> None:
        self._groups = LayerGroups(pl_module.model)
        self._probe_ids = trainer.datamodule.probe_batch(self.probe_seqs)[0].to(pl_module.device)  # (B, T)
        model = pl_module.model
        detail = f"attention paths: {','.join(model.attention_paths)}; attn_softcap={model.cfg.attn_softcap}"
        record_event(trainer, trainer.global_step, "probe_setup", detail=detail)

    def on_before_optimizer_step(self, trainer, pl_module, optimizer) -> None:
        if not self.is_probe_step(trainer.global_step + 1):
            return
        params = [local(p) for p in self.groups.all]
        self._grad_rms = self.groups.rms([local(p.grad) if p.grad is not None else torch.zeros_like(p)
                                          for p in self.groups.all])
        self._before_step = [p.detach().clone() for p in params]

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if self._before_step is None or pl_module.finished_step_values() is None:
            return
        params = [local(p).detach() for p in self.groups.all]
        per_layer = {
            "param_rms": self.groups.rms(params),
            "grad_rms": self._grad_rms,
            "update_rms": self.groups.rms(torch._foreach_sub(params, self._before_step)),
        }
        self._before_step = self._grad_rms = None
        self._probe(trainer, pl_module, per_layer)

    def on_train_end(self, trainer, pl_module) -> None:
        """A run stopped early (diverged) is probed where it stopped: its logits are the finding."""
        if self._probed_step != trainer.global_step:
            self._probe(trainer, pl_module,
                        {"param_rms": self.groups.rms([local(p).detach() for p in self.groups.all])})

    def state_dict(self) -> dict[str, Any]:
        """The run's largest logits so far: a resumed run's summary covers the whole run, not its last segment."""
        return {"max_attention_logit": self.max_attention_logit, "max_output_logit": self.max_output_logit}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.max_attention_logit = state_dict["max_attention_logit"]
        self.max_output_logit = state_dict["max_output_logit"]

    def _probe(self, trainer, pl_module, per_layer) -> None:
        started = time.perf_counter()
        assert self._probe_ids is not None, "on_train_start runs first"
        # eager even when the model is compiled: a probe's few sequences with q/k captured would be a graph of their
        # own, compiled once per run for a pass that runs every `probe_every` steps (a third of a CPU test's compile)
        with trainer.precision_plugin.forward_context(), torch.compiler.set_stance("force_eager"):
            signals = probe_signals(pl_module.model, self._probe_ids)
        self._record(trainer, trainer.global_step, signals, per_layer)
        self._probed_step = trainer.global_step
        self.probe_seconds += time.perf_counter() - started

    def _record(self, trainer, step: int, signals, per_layer) -> None:
        grids = {
            "attn_logit_max": signals.attn_logit_max,
            "q_rms": signals.q_rms,
            "k_rms": signals.k_rms,
        }
        if signals.attn_logit_max_capped is not None:
            grids["attn_logit_max_capped"] = signals.attn_logit_max_capped
        for name, (layers, _) in per_layer.items():
            grids[name] = layers
        for name, values in grids.items():
            record_layer_metrics(trainer, step, name, values.float().cpu())
        metrics = {
            "attn_logit_max": signals.attn_logit_max.amax(),
            "output_logit_max_abs": signals.output_logit_max_abs,
            "output_logit_std": signals.output_logit_std,
            "output_log_z_mean": signals.output_log_z_mean,
        }
        for name, (_, outside) in per_layer.items():
            metrics.update({f"{name}/{param}": value for param, value in outside.items()})
        numbers = torch.stack([v.float() for v in metrics.values()]).tolist()
        metrics = dict(zip(metrics, numbers))
        self.max_attention_logit = max(self.max_attention_logit, metrics["attn_logit_max"])
        self.max_output_logit = max(self.max_output_logit, metrics["output_logit_max_abs"])
        for logger in trainer.loggers:
            logger.log_metrics(metrics, step)
