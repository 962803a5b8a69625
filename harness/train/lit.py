"""The LightningModule of one arm: next-token loss (+ z-loss, + MoE balance loss), AdamW, schedule, clipping.

Per-step telemetry stays on the device until a callback asks for it: `finished_step_values()` turns the
step's loss terms and grad norm into floats with one `.tolist()`, shared by every callback of that batch.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from lightning.pytorch import LightningModule

from harness.config.model import ModelConfig
from harness.config.train import TrainConfig
from harness.model import build_model
from harness.train.checkpoints import CONFIGS_KEY
from harness.train.optim import build_optimizer

LOSS_TERMS = ("train_loss", "z_loss", "aux_loss")  # CE, mean(log Z²) (0 when z-loss is off), MoE balance loss


def next_token_losses(logits: torch.Tensor, targets: torch.Tensor,
                      with_z: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(mean cross-entropy, mean log Z² or None) of logits (B, T, V) against targets (B, T), in float32.

    One fused log-softmax serves both: log Z = zᵢ − log pᵢ for any class i (class 0 here), so the z-loss
    costs no second pass over the vocabulary. (A logsumexp + gather formulation was ~15% slower per step
    on CPU: its backward is unfused.)
    """
    logits = logits.float()
    log_probs = F.log_softmax(logits, dim=-1)  # (B, T, V)
    ce = F.nll_loss(log_probs.flatten(0, 1), targets.flatten())
    if not with_z:
        return ce, None
    log_z = logits[..., 0] - log_probs[..., 0]  # (B, T)
    return ce, log_z.square().mean()


class LitLM(LightningModule):
    """Trains `build_model(model_cfg)` under `train_cfg`; the configs travel in the checkpoint (`CONFIGS_KEY`)."""

    def __init__(self, model_cfg: ModelConfig, train_cfg: TrainConfig) -> None:
        super().__init__()
        self.model_cfg, self.train_cfg = model_cfg, train_cfg
        self.model = build_model(model_cfg)
        if train_cfg.compile:
            self.model.compile()  # in place: parameter names (and so checkpoints) stay those of the eager model
        self._step_terms: torch.Tensor | None = None  # (3,) LOSS_TERMS averaged over this step's micro-batches
        self._micro_batches = 0  # of the optimizer step in progress
        self._grad_norm: torch.Tensor | None = None
        self._step_lr = 0.0
        self._step_finished = False
        self._step_values: dict[str, float] | None = None  # floats of the last step read
        self._values_read = False

    def on_train_batch_start(self, batch, batch_idx) -> None:
        self._step_finished = False

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        input_ids, targets = batch  # (B, T), (B, T)
        logits = self.model(input_ids)  # (B, T, V)
        cfg = self.train_cfg
        ce, z_squared = next_token_losses(logits, targets, with_z=cfg.z_loss > 0)
        aux = self.model.aux_loss
        loss = ce + cfg.moe_aux_coef * aux
        if z_squared is None:
            z_squared = torch.zeros_like(ce)
        else:
            loss = loss + cfg.z_loss * z_squared
        terms = torch.stack((ce, z_squared, aux.float())).detach() / cfg.grad_accum  # (3,)
        self._step_terms = terms if self._micro_batches == 0 or self._step_terms is None else self._step_terms + terms
        self._micro_batches += 1
        return loss

    def configure_gradient_clipping(self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None) -> None:
        """Called once per optimizer step: the pre-clip grad norm is computed here, once, then clipped with."""
        # each process saw its share of the batch: the step's loss is their mean
        if self._trainer is not None and self.trainer.world_size > 1:
            self._step_terms = self.trainer.strategy.reduce(self._step_terms, reduce_op="mean")
        params = [p for p in self.parameters() if p.grad is not None]
        norm = torch.nn.utils.get_total_norm([p.grad for p in params if p.grad is not None])
        if self.train_cfg.grad_clip is not None:
            torch.nn.utils.clip_grads_with_norm_(params, self.train_cfg.grad_clip, norm)
        self._grad_norm = norm.full_tensor() if hasattr(norm, "full_tensor") else norm  # FSDP: over every shard
        self._step_lr = optimizer.param_groups[0]["lr"]
        self._step_finished = True
        self._micro_batches = 0
        self._values_read = False

    @property
    def last_step_values(self) -> dict[str, float] | None:
        """Floats of the last optimizer step whose values were read (None before the first)."""
        return self._step_values

    def finished_step_values(self) -> dict[str, float] | None:
        """Floats of the optimizer step this batch finished (loss terms, grad_norm, lr); None mid-accumulation."""
        if not self._step_finished:
            return None
        if not self._values_read:
            assert self._step_terms is not None and self._grad_norm is not None  # a finished step set both
            self._values_read = True
            numbers = torch.cat((self._step_terms, self._grad_norm.float().reshape(1))).tolist()  # one sync
            self._step_values = {**dict(zip(LOSS_TERMS, numbers)), "grad_norm": numbers[-1], "lr": self._step_lr}
        return self._step_values

    def configure_model(self) -> None:
        """Under FSDP (Lightning's ModelParallelStrategy gives the module a device mesh) shard every block, then
        the rest of the model, over the run's processes; on one device, or under DDP, nothing to do."""
        if self.device_mesh is None:
            return
        from torch.distributed.fsdp import fully_shard

        mesh = self.device_mesh["data_parallel"]
        for block in self.model.layers:
            fully_shard(block, mesh=mesh)
        fully_shard(self.model, mesh=mesh)

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint[CONFIGS_KEY] = {"model": self.model_cfg.to_dict(), "train": self.train_cfg.to_dict()}

    def configure_optimizers(self):
        optimizer, scheduler = build_optimizer(self.model, self.train_cfg)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}
