"""AdamW groups (no decay on embeddings/norms/biases), independent vs coupled decay, and the LR schedule."""

import pytest
import torch

from harness.config import TrainConfig
from harness.model import build_model
from harness.presets import from_name
from harness.train.optim import build_optimizer, lr_multiplier, parameter_groups


def test_warmup_reaches_peak_then_cosine_ends_at_min_lr():
    cfg = TrainConfig(steps=101, warmup_steps=10, lr=1e-3, min_lr=1e-5, schedule="cosine")
    assert lr_multiplier(0, cfg) == pytest.approx(0.1)
    assert lr_multiplier(9, cfg) == pytest.approx(1.0)
    assert lr_multiplier(10, cfg) == pytest.approx(1.0)
    assert lr_multiplier(55, cfg) == pytest.approx((1 + 1e-2) / 2)  # halfway down the cosine
    assert lr_multiplier(100, cfg) == pytest.approx(1e-2)
    assert lr_multiplier(500, cfg) == pytest.approx(1e-2)


@pytest.mark.parametrize("schedule", ["cosine", "linear"])
@pytest.mark.parametrize(("steps", "warmup"), [(100, 10), (7, 0), (5, 4), (1, 0), (3, 5)])
def test_the_last_step_trains_at_min_lr_exactly(schedule, steps, warmup):
    cfg = TrainConfig(steps=steps, warmup_steps=warmup, lr=1e-3, min_lr=1e-5, schedule=schedule)
    if warmup < steps:
        assert lr_multiplier(steps - 1, cfg) == cfg.min_lr / cfg.lr
        assert 1e-3 * lr_multiplier(steps - 1, cfg) == 1e-5
    if warmup < steps - 1:
        assert lr_multiplier(warmup, cfg) == 1.0  # the decay starts at the peak
    multipliers = [lr_multiplier(s, cfg) for s in range(warmup, steps)]
    assert multipliers == sorted(multipliers, reverse=True)


def test_linear_and_constant_schedules():
    linear = TrainConfig(steps=21, warmup_steps=0, lr=1.0, min_lr=0.0, schedule="linear")
    assert [lr_multiplier(s, linear) for s in (0, 10, 20)] == pytest.approx([1.0, 0.5, 0.0])
    constant = TrainConfig(steps=20, warmup_steps=4, schedule="constant")
    assert [lr_multiplier(s, constant) for s in (1, 3, 19)] == pytest.approx([0.5, 1.0, 1.0])


def test_no_decay_on_embeddings_norms_biases():
    model = build_model(from_name("tiny", bias="all", norm="layernorm", tie_embeddings=False))
    decayed, plain = parameter_groups(model, TrainConfig())
    names = {id(p): n for n, p in model.named_parameters()}
    decayed_names = {names[id(p)] for p in decayed["params"]}
    plain_names = {names[id(p)] for p in plain["params"]}
    assert "tok_emb.weight" in plain_names and "lm_head.weight" in decayed_names
    assert all(n.endswith(".bias") or "norm" in n or n == "tok_emb.weight" for n in plain_names)
    assert "layers.0.attn.q_proj.weight" in decayed_names and "layers.1.mlp.down_proj.weight" in decayed_names
    assert plain["weight_decay"] == 0.0 and decayed["weight_decay"] == 0.1
    (everything,) = parameter_groups(model, TrainConfig(no_decay_embeddings_norms_biases=False))
    assert len(everything["params"]) == len(list(model.parameters()))


@pytest.mark.parametrize("wd_mode, expected_factor",
                         [("coupled", 1 - 0.5 * 1e-2 * 1e-2), ("independent", 1 - 0.5 * 1e-2)])
def test_decay_per_step_follows_the_mode(wd_mode, expected_factor):
    """With zero gradients AdamW's step is pure decay: coupled shrinks by s·η·λ, independent by s·λ."""
    cfg = TrainConfig(steps=10, warmup_steps=2, lr=1e-2, min_lr=0.0, weight_decay=1e-2, wd_mode=wd_mode)
    model = torch.nn.Linear(4, 4, bias=False)
    before = model.weight.detach().clone()
    optimizer, scheduler = build_optimizer(model, cfg)
    model.weight.grad = torch.zeros_like(model.weight)
    optimizer.step()  # step 0 of warmup: s = 1/2
    assert torch.allclose(model.weight, before * expected_factor)
    scheduler.step()
    assert optimizer.param_groups[0]["lr"] == pytest.approx(1e-2)  # step 1: warmup done


def test_lambda_schedule_drives_the_optimizer_lr():
    cfg = TrainConfig(steps=6, warmup_steps=2, lr=1e-3, min_lr=1e-4)
    optimizer, scheduler = build_optimizer(torch.nn.Linear(2, 2), cfg)
    seen = []
    for _ in range(6):
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    assert seen == pytest.approx([1e-3 * lr_multiplier(s, cfg) for s in range(6)])
