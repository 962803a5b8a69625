"""Position-wise feed-forward layers: dense (act(x·W_up)·W_down) and gated (GLU, Shazeer 2020).

Their tensors are declared in `harness.model.spec.mlp`; the activation is the registry's for `cfg.mlp`.
"""

from __future__ import annotations

from functools import partial
from typing import Callable

import torch
import torch.nn.functional as F

from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.component import Component, declared_linear
from harness.model.spec.params import Params

Activation = Callable[[torch.Tensor], torch.Tensor]

# An MLP entry's `activation` name → the function, given the config (GELU reads gelu_approximate).
ACTIVATIONS: dict[str, Callable[[ModelConfig], Activation]] = {
    "relu": lambda cfg: F.relu,
    "silu": lambda cfg: F.silu,
    "gelu": lambda cfg: partial(F.gelu, approximate=registry.GELU_APPROXIMATE[cfg.gelu_approximate]),
}


def activation(cfg: ModelConfig) -> Activation:
    """The elementwise nonlinearity of `cfg.mlp` (SiLU for SwiGLU, GELU for GeGLU, …)."""
    return ACTIVATIONS[registry.MLPS[cfg.mlp].activation](cfg)


class DenseMLP(Component):
    """down(act(up(x))): ReLU (Vaswani et al.) or GELU (GPT-2) feed-forward."""

    def __init__(self, cfg: ModelConfig, layer: int, params: Params) -> None:
        super().__init__()
        self.activation = activation(cfg)
        self.up_proj = declared_linear(params, "up_proj")
        self.down_proj = declared_linear(params, "down_proj")
        self.declare(params)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.activation(self.up_proj(x)))


class GatedMLP(Component):
    """down(act(gate(x)) ⊙ up(x)): SwiGLU with SiLU (Llama), GeGLU with GELU (Gemma)."""

    def __init__(self, cfg: ModelConfig, layer: int, params: Params) -> None:
        super().__init__()
        self.activation = activation(cfg)
        self.gate_proj = declared_linear(params, "gate_proj")
        self.up_proj = declared_linear(params, "up_proj")
        self.down_proj = declared_linear(params, "down_proj")
        self.declare(params)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.activation(self.gate_proj(x)) * self.up_proj(x))
