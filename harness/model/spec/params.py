"""Torch-free parameter declarations: the one description of a component's tensors.

A component declares, next to its module, every tensor it owns: its shape, how it is initialized, and how
many of its weights one token is multiplied by. `harness.calc` counts parameters and FLOPs from these
declarations without torch; the module creates and initializes its parameters from the same ones, so the
calculator cannot drift from the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from harness.config.model import ModelConfig

InitKind = Literal["normal", "ones", "zeros"]


@dataclass(frozen=True)
class Init:
    """How a tensor starts: normal(0, std) then times `scale` (GPT-2's scaled init), or all ones / zeros."""

    kind: InitKind
    std: float = 0.0
    scale: float = 1.0


ONES, ZEROS = Init("ones"), Init("zeros")


@dataclass(frozen=True)
class Param:
    """One tensor of a component. `matmul`: how many of its weights one token is multiplied by in the
    forward pass (its size for a projection, the active share for experts, 0 for lookups, norms, biases)."""

    shape: tuple[int, ...]
    init: Init
    matmul: int = 0

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


Params = dict[str, Param]  # name relative to the declaring module (dots reach into its own sub-layers) → Param

# bias → which parts carry a bias: q/k/v/o projections, the dense MLP, LayerNorm's β (router, experts and the
# LM head never do).
BIAS: dict[str, frozenset[str]] = {
    "none": frozenset(),
    "qkv": frozenset({"q", "k", "v"}),
    "all": frozenset({"q", "k", "v", "o", "mlp", "norm"}),
}


def has_bias(cfg: ModelConfig, part: str) -> bool:
    """Whether `part` ('q', 'k', 'v', 'o', 'mlp' or 'norm') carries a bias under `cfg.bias`."""
    return part in BIAS[cfg.bias]


def weight_init(cfg: ModelConfig) -> Init:
    """Every weight matrix, embedding and sink logit: normal(0, init_std)."""
    return Init("normal", cfg.init_std)


def output_init(cfg: ModelConfig) -> Init:
    """Projections that write into the residual stream: std / sqrt(2·n_layers) with scaled_init (GPT-2)."""
    return Init("normal", cfg.init_std, 1 / math.sqrt(2 * cfg.n_layers) if cfg.scaled_init else 1.0)


def linear(name: str, fan_in: int, fan_out: int, bias: bool, init: Init) -> Params:
    """An nn.Linear `name` (weight (out, in), bias zero-initialized when present)."""
    params = {f"{name}.weight": Param((fan_out, fan_in), init, matmul=fan_in * fan_out)}
    if bias:
        params[f"{name}.bias"] = Param((fan_out,), ZEROS)
    return params


def prefixed(prefix: str, params: Params) -> Params:
    """`params` of a sub-module named `prefix`, renamed to the parent's view."""
    return {f"{prefix}.{name}": param for name, param in params.items()}


def count(params: Params) -> int:
    """Number of parameters."""
    return sum(param.numel for param in params.values())


def matmul_weights(params: Params) -> int:
    """Weights one token is multiplied by (the N of 6·N training FLOPs)."""
    return sum(param.matmul for param in params.values())
