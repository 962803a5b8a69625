"""The one place that maps every named switch value of `ModelConfig` to the component that implements it.

Tests iterate these tables against the config's Literal types, so a new value without a component fails loudly.
"""

from __future__ import annotations

from functools import partial

import torch.nn.functional as F
from torch import nn

from harness.config.model import ModelConfig
from harness.model.block import Block, ParallelBlock
from harness.model.mlp import Activation, DenseMLP, GatedMLP
from harness.model.norms import LayerNorm, RMSNorm
from harness.model.positions import LearnedPositions, NoPositions, RotaryPositions

NORMS: dict[str, type[nn.Module]] = {"rmsnorm": RMSNorm, "layernorm": LayerNorm}

# norm_position → (block class, the norm slots that hold a norm; the rest stay Identity).
NORM_POSITIONS: dict[str, tuple[type[nn.Module], tuple[str, ...]]] = {
    "pre": (Block, ("norm_attn_in", "norm_mlp_in")),
    "post": (Block, ("norm_attn_post", "norm_mlp_post")),
    "sandwich": (Block, ("norm_attn_in", "norm_attn_out", "norm_mlp_in", "norm_mlp_out")),
    "reordered": (Block, ("norm_attn_out", "norm_mlp_out")),
    "parallel": (ParallelBlock, ("norm_attn_in",)),
}
# Post-norm already normalizes the last residual sum; every other placement needs a final norm.
FINAL_NORM: dict[str, bool] = {"pre": True, "post": False, "sandwich": True, "reordered": True, "parallel": True}

# mlp → (feed-forward class, activation name); with n_experts > 1 the same kind becomes each expert.
MLPS: dict[str, tuple[type[nn.Module], str]] = {
    "relu": (DenseMLP, "relu"),
    "gelu": (DenseMLP, "gelu"),
    "swiglu": (GatedMLP, "silu"),
    "geglu": (GatedMLP, "gelu"),
}
GELU_APPROXIMATE: dict[str, str] = {"none": "none", "tanh": "tanh"}  # ModelConfig value → F.gelu argument
ACTIVATIONS = {
    "relu": lambda cfg: F.relu,
    "silu": lambda cfg: F.silu,
    "gelu": lambda cfg: partial(F.gelu, approximate=GELU_APPROXIMATE[cfg.gelu_approximate]),
}

# qk_norm → norm class (None: no QK-norm); qk_norm_scope → width of the normalized vector.
QK_NORMS: dict[str, type[nn.Module] | None] = {"none": None, "rmsnorm": RMSNorm, "layernorm": LayerNorm}
QK_NORM_WIDTH = {
    "head": lambda cfg, n_heads: cfg.head_dim,
    "full": lambda cfg, n_heads: n_heads * cfg.head_dim,
}

POSITIONS = {
    "rope": lambda cfg: RotaryPositions(cfg.head_dim, cfg.rope_theta),
    "learned": lambda cfg: LearnedPositions(cfg.max_seq_len, cfg.d_model),
    "nope": lambda cfg: NoPositions(),
}

# bias → which parts carry a bias: q/k/v/o projections, the MLP, LayerNorm's β.
BIAS: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "qkv": frozenset({"q", "k", "v"}),
    "all": frozenset({"q", "k", "v", "o", "mlp", "norm"}),
}


def activation(cfg: ModelConfig) -> Activation:
    """The elementwise nonlinearity of `cfg.mlp` (SiLU for SwiGLU, GELU for GeGLU, …)."""
    return ACTIVATIONS[MLPS[cfg.mlp][1]](cfg)


def norm(cfg: ModelConfig, width: int, cls: type[nn.Module] | None = None) -> nn.Module:
    """A `cfg.norm` (or `cls`) norm over `width` channels with the config's eps, offset and bias rules."""
    cls = cls or NORMS[cfg.norm]
    return cls(width, cfg.norm_eps, unit_offset=cfg.norm_unit_offset, bias="norm" in BIAS[cfg.bias])


def qk_norm(cfg: ModelConfig, n_heads: int) -> nn.Module:
    """The QK-norm of q (n_heads = H) or k (n_heads = Hkv); Identity when qk_norm is 'none'."""
    cls = QK_NORMS[cfg.qk_norm]
    if cls is None:
        return nn.Identity()
    return norm(cfg, QK_NORM_WIDTH[cfg.qk_norm_scope](cfg, n_heads), cls)
