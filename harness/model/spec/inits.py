"""How a tensor starts, torch-free: init kinds, and the documented rules that pick one for a config.

An init kind is data that fills its own tensor (`fill`), so `harness.model.component` has no list of kinds and
a new kind is one class here. `fill` works through the tensor's own in-place methods; a kind that needs a
torch function imports torch inside `fill`, so declarations (read by calc and config validation) stay
torch-free.

A rule (`for_config(cfg) -> Init`) is how docs/model.md states a start in terms of the config: weights are
normal(0, init_std) (`WEIGHT`), projections into the residual stream are scaled with depth (`RESIDUAL`), a
norm's γ starts at the identity (`NORM_SCALE`). Every init is also a rule that gives itself for any config, so
a registry entry documents a fixed start such as `Constant(0.5)` the same way (see `registry.Part.init`).

A rule also knows its tensor's `role` (`harness.model.spec.parametrization`: input, hidden or output), which
scales its start and its Adam LR with width under μP: `WEIGHT` and `RESIDUAL` are hidden matrices,
`INPUT_WEIGHT` the tables and sink logits, `OUTPUT_WEIGHT` the readouts; a fixed start and a norm's γ are input
(vector-like) tensors.
"""

from __future__ import annotations

import abc
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from harness.model.spec.parametrization import HIDDEN, INPUT, OUTPUT, init_multiplier

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


class Init(abc.ABC):
    """How one tensor starts: a frozen dataclass of plain values that fills a tensor in place. As a rule it
    documents a tensor whose start does not scale with width (an input, i.e. vector-like, role)."""

    role = INPUT

    @abc.abstractmethod
    def fill(self, tensor: Any) -> None:
        """Overwrite every element of `tensor` (called under `torch.no_grad()`)."""

    def for_config(self, cfg: ModelConfig) -> Init:
        """A fixed start is the same for every config."""
        return self


@dataclass(frozen=True)
class Constant(Init):
    """Every element `value` (ones and zeros are its values; DyT's α starts at 0.5)."""

    value: float

    def fill(self, tensor: Any) -> None:
        tensor.fill_(self.value)


ONES, ZEROS = Constant(1.0), Constant(0.0)


@dataclass(frozen=True)
class Normal(Init):
    """normal(0, std), then times `multiplier`. The two stay apart, and the draw comes first, because GPT-2's
    scaled init multiplies after drawing and a seed's exact weights depend on that order; `effective_std` is
    the resulting spread."""

    std: float
    multiplier: float = 1.0

    @property
    def effective_std(self) -> float:
        return self.std * self.multiplier

    def fill(self, tensor: Any) -> None:
        tensor.normal_(0.0, self.std)
        if self.multiplier != 1.0:
            tensor.mul_(self.multiplier)


class InitRule(Protocol):
    """A documented start, stated in terms of the config, and the role of the tensor (every `Init` is one)."""

    @property
    def role(self) -> str: ...  # read-only: the rules are frozen dataclasses

    def for_config(self, cfg: ModelConfig) -> Init: ...


@dataclass(frozen=True)
class StdRule:
    """normal(0, init_std) for a tensor of `role`, times its parametrization's width factor (under μP
    1/√(d_model / mup_base_width) for a hidden matrix); a `residual` projection (one that writes into the
    residual stream: o_proj, down_proj) also times 1/√(2·n_layers) with scaled_init (GPT-2)."""

    residual: bool = False
    role: str = HIDDEN

    def for_config(self, cfg: ModelConfig) -> Normal:
        scaled = self.residual and cfg.scaled_init
        depth = 1 / math.sqrt(2 * cfg.n_layers) if scaled else 1.0
        return Normal(cfg.init_std, depth * init_multiplier(cfg, self.role))


@dataclass(frozen=True)
class NormScale:
    """A norm's γ at the identity: ones, or zeros when it is stored as an offset from one (norm_unit_offset,
    Gemma's 1 + w)."""

    role = INPUT

    def for_config(self, cfg: ModelConfig) -> Constant:
        return ZEROS if cfg.norm_unit_offset else ONES


WEIGHT, RESIDUAL, NORM_SCALE = StdRule(), StdRule(residual=True), NormScale()
INPUT_WEIGHT, OUTPUT_WEIGHT = StdRule(role=INPUT), StdRule(role=OUTPUT)
