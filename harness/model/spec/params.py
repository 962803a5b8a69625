"""Torch-free parameter declarations: the one description of a component's tensors.

A component declares, next to its module, every tensor it owns: its shape, how it starts (an `Init` of
`harness.model.spec.inits`), its role (which scales its start and its LR with width under μP,
`harness.model.spec.parametrization`), and how many of its weights one token is multiplied by. `harness.calc` counts
parameters and FLOPs from these declarations without torch; the module creates and initializes its
parameters from the same ones, so the calculator cannot drift from the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness.model.spec.inits import ZEROS, Init, InitRule
from harness.model.spec.parametrization import INPUT

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


@dataclass(frozen=True)
class Param:
    """One tensor of a component. `matmul`: how many of its weights one token is multiplied by in the
    forward pass (its size for a projection, the active share for experts, 0 for lookups, norms, biases).
    `role`: input, hidden or output (`harness.model.spec.parametrization`); `param()` takes it from the rule."""

    shape: tuple[int, ...]
    init: Init
    matmul: int = 0
    role: str = INPUT

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


def param(shape: tuple[int, ...], rule: InitRule, cfg: ModelConfig, matmul: int = 0) -> Param:
    """A tensor that starts as `rule` gives for `cfg`, in the rule's role."""
    return Param(shape, rule.for_config(cfg), matmul, rule.role)


def linear(name: str, fan_in: int, fan_out: int, bias: bool, weight: InitRule, cfg: ModelConfig) -> Params:
    """An nn.Linear `name` (weight (out, in) started by the rule `weight`, bias zero-initialized when present)."""
    params = {f"{name}.weight": param((fan_out, fan_in), weight, cfg, matmul=fan_in * fan_out)}
    if bias:
        params[f"{name}.bias"] = Param((fan_out,), ZEROS)
    return params


def linear_init(name: str, weight: InitRule) -> dict[str, InitRule]:
    """The documented start of what `linear(name, …)` declares: its weight by `weight`, a bias at zero."""
    return {f"{name}.weight": weight, f"{name}.bias": ZEROS}


def prefixed(prefix: str, params: Params) -> Params:
    """`params` of a sub-module named `prefix`, renamed to the parent's view."""
    return {f"{prefix}.{name}": param for name, param in params.items()}


def count(params: Params) -> int:
    """Number of parameters."""
    return sum(param.numel for param in params.values())


def matmul_weights(params: Params) -> int:
    """Weights one token is multiplied by (the N of 6·N training FLOPs)."""
    return sum(param.matmul for param in params.values())
