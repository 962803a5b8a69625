"""RMSNorm and LayerNorm over the last dimension, both on PyTorch's fused kernels.

`unit_offset` stores the scale as w and applies (1 + w) (Gemma), so a zero-initialized weight is the identity.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class _ScaledNorm(nn.Module):
    """Shared weight handling: a learned per-channel scale, optionally applied as (1 + w)."""

    def __init__(self, dim: int, eps: float, unit_offset: bool) -> None:
        super().__init__()
        self.dim, self.eps, self.unit_offset = dim, eps, unit_offset
        self.weight = nn.Parameter(torch.empty(dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Identity at init: ones, or zeros when the weight is stored as an offset from one."""
        nn.init.zeros_(self.weight) if self.unit_offset else nn.init.ones_(self.weight)

    def scale(self) -> torch.Tensor:
        return 1 + self.weight if self.unit_offset else self.weight

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}, unit_offset={self.unit_offset}"


class RMSNorm(_ScaledNorm):
    """x / rms(x) · γ (Zhang & Sennrich 2019); never has a bias."""

    # `bias` is accepted (and ignored) so every norm class shares one constructor signature in the registry.
    def __init__(self, dim: int, eps: float, unit_offset: bool = False, bias: bool = False) -> None:
        super().__init__(dim, eps, unit_offset)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (self.dim,), self.scale(), self.eps)


class LayerNorm(_ScaledNorm):
    """(x - mean) / std · γ + β (Ba et al. 2016); β only when `bias` (the `bias == "all"` switch)."""

    def __init__(self, dim: int, eps: float, unit_offset: bool = False, bias: bool = False) -> None:
        super().__init__(dim, eps, unit_offset)
        self.bias = nn.Parameter(torch.zeros(dim)) if bias else None

    def reset_parameters(self) -> None:
        super().reset_parameters()
        if getattr(self, "bias", None) is not None:
            nn.init.zeros_(self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (self.dim,), self.scale(), self.bias, self.eps)
