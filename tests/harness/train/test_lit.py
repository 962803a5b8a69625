"""The LightningModule's loss terms and its once-per-step grad norm (before clipping)."""

import pytest
import torch
import torch.nn.functional as F

from harness.config import TrainConfig
from harness.train.lit import LitLM, next_token_losses


def test_losses_match_cross_entropy_and_log_z_squared():
    torch.manual_seed(0)
    logits, targets = torch.randn(2, 5, 11) * 3, torch.randint(0, 11, (2, 5))
    ce, z_squared = next_token_losses(logits, targets, with_z=True)
    torch.testing.assert_close(ce, F.cross_entropy(logits.flatten(0, 1), targets.flatten()))
    torch.testing.assert_close(z_squared, torch.logsumexp(logits, -1).pow(2).mean())
    assert next_token_losses(logits, targets)[1] is None  # z-loss off: not computed


def test_z_loss_gradient_matches_the_logsumexp_formula():
    torch.manual_seed(1)
    logits = (torch.randn(2, 4, 9) * 5).requires_grad_()
    targets = torch.randint(0, 9, (2, 4))
    ce, z_squared = next_token_losses(logits, targets, with_z=True)
    (ce + 1e-2 * z_squared).backward()
    reference = logits.detach().clone().requires_grad_()
    z_loss = torch.logsumexp(reference, -1).pow(2).mean()
    (F.cross_entropy(reference.flatten(0, 1), targets.flatten()) + 1e-2 * z_loss).backward()
    torch.testing.assert_close(logits.grad, reference.grad)


def test_bf16_logits_are_reduced_in_float32():
    logits = torch.randn(2, 3, 7).bfloat16()
    ce, z_squared = next_token_losses(logits, torch.zeros(2, 3, dtype=torch.long), with_z=True)
    assert ce.dtype == z_squared.dtype == torch.float32


def test_grad_norm_is_recorded_before_clipping(tiny_model_cfg):
    torch.manual_seed(0)
    module = LitLM(tiny_model_cfg, TrainConfig(grad_clip=1e-3, z_loss=1e-4))
    batch = torch.randint(0, tiny_model_cfg.vocab_size, (2, 16)), torch.randint(0, tiny_model_cfg.vocab_size, (2, 16))
    module.on_train_batch_start(batch, 0)
    module.training_step(batch, 0).backward()
    unclipped = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in module.parameters()]))
    optimizer, _ = module.configure_optimizers().values()
    module.configure_gradient_clipping(optimizer)
    values = module.finished_step_values()
    assert values["grad_norm"] == pytest.approx(unclipped.item(), rel=1e-5)
    clipped = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in module.parameters()]))
    assert clipped.item() == pytest.approx(1e-3, rel=1e-3)
    assert values["z_loss"] > 0 and values["lr"] == pytest.approx(1e-3 / 100)  # step 0 of 100 warmup steps


class FixedBatches:
    """An iterable of given (inputs, targets) micro-batches for a real Trainer."""

    def __init__(self, batches):
        self.batches = batches

    def __iter__(self):
        return iter(self.batches)


def one_step(model_cfg, batches, grad_accum):
    """Loss terms, grad norm and accumulated gradients of one optimizer step of a real Trainer."""
    from lightning.pytorch import Trainer, seed_everything

    seed_everything(0, verbose=False)
    train = TrainConfig(steps=1, batch_size=len(batches[0][0]), grad_accum=grad_accum, warmup_steps=0, grad_clip=None)
    module = LitLM(model_cfg, train)
    grads = {}
    clip = module.configure_gradient_clipping

    def record_grads(optimizer, *args, **kwargs):
        grads.update({name: p.grad.clone() for name, p in module.named_parameters()})
        clip(optimizer, *args, **kwargs)

    module.configure_gradient_clipping = record_grads
    trainer = Trainer(
        max_steps=1, accumulate_grad_batches=grad_accum, logger=False, enable_checkpointing=False,
        enable_progress_bar=False, enable_model_summary=False, limit_val_batches=0,
    )
    trainer.fit(module, train_dataloaders=FixedBatches(batches))
    return module.finished_step_values(), grads


def test_two_accumulated_half_batches_equal_one_full_batch(tiny_model_cfg):
    """accum 2 × batch 4 and batch 8 of the same sequences: same loss, same grad norm, same gradient."""
    tokens = torch.randint(0, tiny_model_cfg.vocab_size, (8, 17), generator=torch.Generator().manual_seed(0))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]  # (8, 16) each
    full_values, full_grads = one_step(tiny_model_cfg, [(inputs, targets)], grad_accum=1)
    halves = [(inputs[:4], targets[:4]), (inputs[4:], targets[4:])]
    accum_values, accum_grads = one_step(tiny_model_cfg, halves, grad_accum=2)
    assert accum_values["train_loss"] == pytest.approx(full_values["train_loss"], rel=1e-6)
    assert accum_values["grad_norm"] == pytest.approx(full_values["grad_norm"], rel=1e-5)
    for name, grad in full_grads.items():
        torch.testing.assert_close(accum_grads[name], grad, rtol=1e-4, atol=1e-7)
