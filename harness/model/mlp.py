"""Position-wise feed-forward layers: dense (act(x·W_up)·W_down) and gated (GLU, Shazeer 2020)."""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

Activation = Callable[[torch.Tensor], torch.Tensor]


class DenseMLP(nn.Module):
    """down(act(up(x))): ReLU (Vaswani et al.) or GELU (GPT-2) feed-forward."""

    def __init__(self, d_model: int, d_ff: int, activation: Activation, bias: bool) -> None:
        super().__init__()
        self.activation = activation
        self.up_proj = nn.Linear(d_model, d_ff, bias=bias)
        self.down_proj = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.activation(self.up_proj(x)))


class GatedMLP(nn.Module):
    """down(act(gate(x)) ⊙ up(x)): SwiGLU with SiLU (Llama), GeGLU with GELU (Gemma)."""

    def __init__(self, d_model: int, d_ff: int, activation: Activation, bias: bool) -> None:
        super().__init__()
        self.activation = activation
        self.gate_proj = nn.Linear(d_model, d_ff, bias=bias)
        self.up_proj = nn.Linear(d_model, d_ff, bias=bias)
        self.down_proj = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(self.activation(self.gate_proj(x)) * self.up_proj(x))
