"""Declarations of the feed-forward sublayers (`harness/model/mlp.py`, `harness/model/moe.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.model.spec.inits import OUTPUT_WEIGHT, RESIDUAL, WEIGHT
from harness.model.spec.params import Params, has_bias, linear, param

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


def dense(cfg: ModelConfig, layer: int) -> Params:
    """up, down: act(x·W_up)·W_down; biases only with `bias='all'`."""
    bias = has_bias(cfg, "mlp")
    return linear("up_proj", cfg.d_model, cfg.d_ff, bias, WEIGHT, cfg) | linear(
        "down_proj", cfg.d_ff, cfg.d_model, bias, RESIDUAL, cfg
    )


def gated(cfg: ModelConfig, layer: int) -> Params:
    """gate, up, down of a GLU (registration order of the module, which fixes the order of init draws)."""
    return linear("gate_proj", cfg.d_model, cfg.d_ff, has_bias(cfg, "mlp"), WEIGHT, cfg) | dense(cfg, layer)


def experts(cfg: ModelConfig, layer: int, gated_experts: bool) -> Params:
    """E stacked bias-free MLPs in nn.Linear layout (E, out, in); a token is multiplied by top_k of them."""
    experts_, top_k, d, f = cfg.n_experts, cfg.moe_top_k, cfg.d_model, cfg.d_ff
    params = {"gate_proj": param((experts_, f, d), WEIGHT, cfg, top_k * f * d)} if gated_experts else {}
    return params | {
        "up_proj": param((experts_, f, d), WEIGHT, cfg, top_k * f * d),
        "down_proj": param((experts_, d, f), RESIDUAL, cfg, top_k * d * f),
    }


def router(cfg: ModelConfig, layer: int) -> Params:
    """The router's logits layer (E, d), a readout: every token is multiplied by all of it."""
    return linear("router", cfg.d_model, cfg.n_experts, False, OUTPUT_WEIGHT, cfg)
