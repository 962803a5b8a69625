"""Declarations of one attention layer (`harness/model/attention.py`): projections, sinks, and its FLOPs.

The q/k norms are norm components of their own (declared by `harness.model.spec.norms`); this module says
how wide they are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.model.spec.inits import INPUT_WEIGHT, RESIDUAL, WEIGHT
from harness.model.spec.params import Params, has_bias, linear, param

if TYPE_CHECKING:
    from harness.config.model import ModelConfig

# qk_norm_scope → width of the normalized vector of q (n_heads = H) or k (n_heads = Hkv).
QK_NORM_WIDTH = {
    "head": lambda cfg, n_heads: cfg.head_dim,
    "full": lambda cfg, n_heads: n_heads * cfg.head_dim,
}


def projections(cfg: ModelConfig, layer: int) -> Params:
    """q, k, v, o (and the per-head sink logits) of 0-based `layer`, in the module's registration order."""
    q_width, kv_width = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    params = {"sinks": param((cfg.n_heads,), INPUT_WEIGHT, cfg)} if cfg.attn_sinks else {}  # per head, like a bias
    return (
        params
        | linear("q_proj", cfg.d_model, q_width, has_bias(cfg, "q"), WEIGHT, cfg)
        | linear("k_proj", cfg.d_model, kv_width, has_bias(cfg, "k"), WEIGHT, cfg)
        | linear("v_proj", cfg.d_model, kv_width, has_bias(cfg, "v"), WEIGHT, cfg)
        | linear("o_proj", q_width, cfg.d_model, has_bias(cfg, "o"), RESIDUAL, cfg)
    )


def score_flops_per_token(cfg: ModelConfig, layer: int, seq_len: int, windowed: bool) -> int:
    """q·kᵀ and A·v of 0-based `layer`, forward and backward: 12·H·head_dim·context. context is seq_len
    (every score computed, as our kernels do: SDPA with a mask and the eager path both fill the T×T
    matrix), or with `windowed` seq_len capped by the layer's window (a kernel that skips what the window
    masks). No causal halving in either (the PaLM convention)."""
    window = cfg.layer_window(layer) if windowed else None
    return 12 * cfg.n_heads * cfg.head_dim * min(seq_len, window or seq_len)
