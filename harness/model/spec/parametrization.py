"""How a model's scales follow its width: the standard parametrization, and μP (Yang et al. 2022, Tensor
Programs V), under which the best learning rate of a small proxy stays the best as the model widens. Torch-free.

Every factor is a power of one width multiplier m = d_model / mup_base_width (1 under the standard
parametrization), so at the base width μP is the standard model exactly. μP assumes a width sweep grows every
hidden dimension with d_model (head_dim and d_ff derived from it, head and expert counts, vocabulary and
context fixed), as in the paper's Transformer experiments; docs/model.md ("μP") gives the table.

A tensor's *role* says how it scales (Tensor Programs V, Table 3; `mup`'s infshape):
- `input`: at most one width-like dimension, which its fan-in is not: the token and position tables, every
  bias and norm gain, the sink logits ("vector-like" in the `mup` package);
- `hidden`: fan-in and fan-out both width-like: q/k/v/o, the MLP's and the experts' projections;
- `output`: a readout from the width to a fixed size: the untied LM head and the MoE router.
Readouts follow the `mup` package's MuReadout: their output is multiplied by 1/m (`readout_multiplier`) and
their weights start and train like input weights, which for Adam equals Table 3's output init variance
1/fan_in² and LR 1/fan_in, and also holds for a tied LM head, whose table is an input weight.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.config.model import ModelConfig

INPUT, HIDDEN, OUTPUT = "input", "hidden", "output"


@dataclass(frozen=True)
class Scaling:
    """Exponents of the width multiplier m for one role: its init std and its Adam LR are times m**exponent."""

    init_std: float = 0.0
    adam_lr: float = 0.0


@dataclass(frozen=True)
class Parametrization:
    """The exponents of m for each role, for the readouts' output (the logits, the router), the attention
    logits' scale (on the base width's: `attn_scale`, or 1/√head_dim of the base) and Gemma's embedding factor
    √d_model."""

    input: Scaling = field(default_factory=Scaling)
    hidden: Scaling = field(default_factory=Scaling)
    output: Scaling = field(default_factory=Scaling)
    readout: float = 0.0
    attention: float = 0.0
    embedding_factor: float = 0.0

    def role(self, role: str) -> Scaling:
        """The scaling of a role (`INPUT`, `HIDDEN` or `OUTPUT`)."""
        return getattr(self, role)


# μP for Adam: hidden weights start at std ∝ 1/√fan_in and train at LR ∝ 1/fan_in; readouts read out × 1/m;
# attention scales q·kᵀ by 1/head_dim instead of 1/√head_dim (the base width's scale × 1/m); Gemma's √d_model
# embedding factor stays the base width's √mup_base_width, so the input keeps a width-free size.
MUP = Parametrization(hidden=Scaling(init_std=-0.5, adam_lr=-1.0), readout=-1.0, attention=-1.0,
                      embedding_factor=-0.5)
PARAMETRIZATIONS: dict[str, Parametrization] = {"standard": Parametrization(), "mup": MUP}


def width_multiplier(cfg: ModelConfig) -> float:
    """m = d_model / mup_base_width under μP; 1 under the standard parametrization."""
    return cfg.d_model / cfg.mup_base_width if cfg.mup_base_width is not None else 1.0


def _scaled(cfg: ModelConfig, exponent: float) -> float:
    return width_multiplier(cfg) ** exponent  # exactly 1.0 for a zero exponent, so standard models stay bitwise


def init_multiplier(cfg: ModelConfig, role: str) -> float:
    """The factor on the init std of a tensor of `role`."""
    return _scaled(cfg, PARAMETRIZATIONS[cfg.parametrization].role(role).init_std)


def lr_multiplier(cfg: ModelConfig, role: str) -> float:
    """The factor on the peak Adam LR of a tensor of `role`."""
    return _scaled(cfg, PARAMETRIZATIONS[cfg.parametrization].role(role).adam_lr)


def readout_multiplier(cfg: ModelConfig) -> float:
    """The factor on a readout's output: the LM head's logits (tied or not) and the MoE router's logits."""
    return _scaled(cfg, PARAMETRIZATIONS[cfg.parametrization].readout)


def attention_scale(cfg: ModelConfig) -> float:
    """The multiplier of q·kᵀ: the base width's (`attn_scale`, or 1/√head_dim of its heads, head_dim / m) times
    m**attention; under μP √(base head_dim) / head_dim, ∝ 1/head_dim as the heads widen."""
    m = width_multiplier(cfg)
    at_base = cfg.attn_scale if cfg.attn_scale is not None else (cfg.head_dim / m) ** -0.5
    return at_base * _scaled(cfg, PARAMETRIZATIONS[cfg.parametrization].attention)


def embedding_factor(cfg: ModelConfig) -> float:
    """`scale_embeddings`' factor: √d_model (Gemma), under μP the base width's √mup_base_width."""
    return cfg.d_model**0.5 * _scaled(cfg, PARAMETRIZATIONS[cfg.parametrization].embedding_factor)
