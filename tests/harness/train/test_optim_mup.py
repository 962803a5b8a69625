"""μP's per-layer Adam LRs (Tensor Programs V, Table 3; the `mup` package's MuAdam): at m = d_model /
mup_base_width = 4 the hidden matrices train at LR/4 and everything else at the LR, and the weight decay of a
step is the same for every group (MuAdam multiplies a group's decay by what it divides its LR by)."""

import pytest
import torch

from harness.config import TrainConfig
from harness.config.model import ModelConfig
from harness.model import build_model
from harness.train.optim import build_optimizer, decays, parameter_groups

WIDTH, BASE_WIDTH = 128, 32
# Every kind of tensor: embeddings, learned positions, biases, sinks, norms, attention, experts, router, LM head.
MUP = ModelConfig(vocab_size=97, d_model=WIDTH, n_layers=2, n_heads=4, n_kv_heads=2, max_seq_len=16, bias="all",
                  norm="layernorm", positions="learned", attn_sinks=True, tie_embeddings=False, n_experts=4,
                  parametrization="mup", mup_base_width=BASE_WIDTH)
HIDDEN = ("q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight", "experts.gate_proj",
          "experts.up_proj", "experts.down_proj")  # both dimensions grow with the width


def _lr_of(model, groups) -> dict[str, float]:
    lr = {id(param): group["lr"] for group in groups for param in group["params"]}
    return {name: lr[id(param)] for name, param in model.named_parameters()}


def test_hidden_matrices_train_at_the_lr_over_the_width_multiplier():
    model = build_model(MUP)
    train = TrainConfig(lr=1e-2)
    lrs = _lr_of(model, parameter_groups(model, train))
    for name, lr in lrs.items():
        hidden = name.endswith(HIDDEN)
        assert lr == pytest.approx(1e-2 * BASE_WIDTH / WIDTH if hidden else 1e-2), name
    assert sum(name.endswith(HIDDEN) for name in lrs) == 2 * 7  # the closed form covered every hidden matrix


def test_standard_models_train_every_parameter_at_the_lr():
    model = build_model(MUP.replace(parametrization="standard", mup_base_width=None))
    assert set(_lr_of(model, parameter_groups(model, TrainConfig(lr=3e-3))).values()) == {3e-3}


def test_the_first_group_trains_at_the_peak_lr_so_the_logged_lr_is_the_runs():
    optimizer, _ = build_optimizer(build_model(MUP), TrainConfig(lr=1e-2, warmup_steps=0))
    assert optimizer.param_groups[0]["lr"] == 1e-2


@pytest.mark.parametrize("wd_mode, weight_decay, shrink", [
    ("coupled", 0.1, 1 - 0.5 * 1e-2 * 0.1),  # s·η·λ
    ("independent", 1e-3, 1 - 0.5 * 1e-3),  # s·λ
])
def test_each_decayed_weight_shrinks_by_what_wd_mode_says_whatever_its_lr(wd_mode, weight_decay, shrink):
    """With zero gradients an AdamW step is pure decay; on warmup's first step s = 1/2."""
    model = build_model(MUP)
    optimizer, _ = build_optimizer(model, TrainConfig(lr=1e-2, warmup_steps=2, weight_decay=weight_decay,
                                                      wd_mode=wd_mode))
    before = {name: param.detach().clone() for name, param in model.named_parameters()}
    for param in model.parameters():
        param.grad = torch.zeros_like(param)
    optimizer.step()
    for name, param in model.named_parameters():  # hidden (LR/4) and vector-like (LR) matrices alike
        expected = before[name] * shrink if decays(name, param) else before[name]
        torch.testing.assert_close(param.detach(), expected, rtol=1e-6, atol=0, msg=name)
