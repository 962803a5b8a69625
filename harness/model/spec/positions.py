"""Declarations of the position encodings (`harness/model/positions.py`): only learned positions own a table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.model.spec.inits import INPUT_WEIGHT
from harness.model.spec.params import Params, param

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


def learned(cfg: ModelConfig, layer: None) -> Params:
    """One vector per absolute position, added to the embeddings (a lookup, not a matmul)."""
    return {"weight": param((cfg.max_seq_len, cfg.d_model), INPUT_WEIGHT, cfg)}


def none(cfg: ModelConfig, layer: None) -> Params:
    """RoPE computes its tables on the fly and NoPE has none: no parameters."""
    return {}
