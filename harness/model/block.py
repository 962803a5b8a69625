"""Transformer blocks. Norm slots default to Identity, so pre, post, sandwich and reordered placement are one
forward path (which slots hold a norm is the registry's business); the parallel residual is the other path.

Slots: `in` normalizes the sublayer input, `out` the sublayer output before the residual add, `post` the
sum after the residual add.
"""

from __future__ import annotations

import torch
from torch import nn

from harness.model.cache import KVCache
from harness.model.positions import Rotation

SLOTS = ("in", "out", "post")


class Block(nn.Module):
    """x ← post(x + out(attn(in(x)))), then the same around the MLP."""

    # Set by name in __init__ (a norm or Identity per slot).
    norm_attn_in: nn.Module
    norm_attn_out: nn.Module
    norm_attn_post: nn.Module
    norm_mlp_in: nn.Module
    norm_mlp_out: nn.Module
    norm_mlp_post: nn.Module

    def __init__(self, attn: nn.Module, mlp: nn.Module, norms: dict[str, nn.Module]) -> None:
        super().__init__()
        self.attn, self.mlp = attn, mlp
        for sublayer in ("attn", "mlp"):
            for slot in SLOTS:
                name = f"norm_{sublayer}_{slot}"
                setattr(self, name, norms.get(name, nn.Identity()))

    def forward(self, x: torch.Tensor, rotation: Rotation | None, cache: KVCache | None = None) -> torch.Tensor:
        x = self.norm_attn_post(x + self.norm_attn_out(self.attn(self.norm_attn_in(x), rotation, cache)))
        return self.norm_mlp_post(x + self.norm_mlp_out(self.mlp(self.norm_mlp_in(x))))


class ParallelBlock(nn.Module):
    """x + attn(n(x)) + mlp(n(x)) with one shared input norm (GPT-J, PaLM), or with a `norm_mlp_in` slot
    x + attn(n₁(x)) + mlp(n₂(x)), each sublayer normalizing the same input with its own weights (GPT-NeoX)."""

    def __init__(self, attn: nn.Module, mlp: nn.Module, norms: dict[str, nn.Module]) -> None:
        super().__init__()
        self.attn, self.mlp = attn, mlp
        self.norm_attn_in = norms["norm_attn_in"]
        self.norm_mlp_in = norms.get("norm_mlp_in")

    def forward(self, x: torch.Tensor, rotation: Rotation | None, cache: KVCache | None = None) -> torch.Tensor:
        h = self.norm_attn_in(x)
        h_mlp = h if self.norm_mlp_in is None else self.norm_mlp_in(x)
        return x + self.attn(h, rotation, cache) + self.mlp(h_mlp)
