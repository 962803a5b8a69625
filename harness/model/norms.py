"""RMSNorm, LayerNorm and a weightless RMSNorm over the last dimension, all on PyTorch's fused kernels.

Their tensors are declared in `harness.model.spec.norms` and handed in by the registry. `norm_unit_offset`
stores the scale as w and applies (1 + w) (Gemma), so a zero-initialized weight is the identity.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from harness.config.model import ModelConfig
from harness.model.component import Component
from harness.model.spec.params import Params


class _ScaledNorm(Component):
    """Shared weight handling: a learned per-channel scale, optionally applied as (1 + w)."""

    weight: torch.nn.Parameter  # declared
    bias: torch.nn.Parameter | None  # declared only for LayerNorm with bias='all'

    def __init__(self, cfg: ModelConfig, layer: int | None, width: int, params: Params) -> None:
        super().__init__()
        self.dim, self.eps, self.unit_offset = width, cfg.norm_eps, cfg.norm_unit_offset
        self.declare(params)
        if "bias" not in params:  # declared only for LayerNorm with bias='all'; None keeps `self.bias` readable
            self.register_parameter("bias", None)
        self.reset_parameters()  # draws nothing, so a norm is ready as soon as it is built

    def scale(self) -> torch.Tensor:
        return 1 + self.weight if self.unit_offset else self.weight

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}, unit_offset={self.unit_offset}"


class RMSNorm(_ScaledNorm):
    """x / rms(x) · γ (Zhang & Sennrich 2019); never has a bias."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (self.dim,), self.scale(), self.eps)


class LayerNorm(_ScaledNorm):
    """(x - mean) / std · γ + β (Ba et al. 2016); β only with `bias='all'`."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, (self.dim,), self.scale(), self.bias, self.eps)


class RMSNormNoWeight(Component):
    """x / rms(x), no learned scale (Llama 4's L2Norm of q and k, which is an RMS norm despite its name)."""

    def __init__(self, cfg: ModelConfig, layer: int | None, width: int, params: Params) -> None:
        super().__init__()
        self.dim, self.eps = width, cfg.norm_eps
        self.declare(params)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, (self.dim,), None, self.eps)

    def extra_repr(self) -> str:
        return f"{self.dim}, eps={self.eps}"
