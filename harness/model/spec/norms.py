"""Declarations of the norms (`harness/model/norms.py`): a per-channel scale, and LayerNorm's β."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.model.spec.inits import NORM_SCALE, ZEROS
from harness.model.spec.params import Param, Params, has_bias, param

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


def scale(cfg: ModelConfig, width: int) -> Params:
    """γ: identity at init, i.e. ones, or zeros when it is stored as an offset from one (Gemma's 1 + w)."""
    return {"weight": param((width,), NORM_SCALE, cfg)}


def rmsnorm(cfg: ModelConfig, layer: int | None, width: int) -> Params:
    """RMSNorm never has a bias."""
    return scale(cfg, width)


def rmsnorm_noweight(cfg: ModelConfig, layer: int | None, width: int) -> Params:
    """x / rms(x) alone: no tensor at all (Llama 4's QK-norm)."""
    return {}


def layernorm(cfg: ModelConfig, layer: int | None, width: int) -> Params:
    """LayerNorm: γ, plus a zero β when the model carries biases everywhere (`bias='all'`)."""
    beta = {"bias": Param((width,), ZEROS)} if has_bias(cfg, "norm") else {}
    return scale(cfg, width) | beta
