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
    (F.cross_entropy(reference.flatten(0, 1), targets.flatten()) + 1e-2 * torch.logsumexp(reference, -1).pow(2).mean()).backward()
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
