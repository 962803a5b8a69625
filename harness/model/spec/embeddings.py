"""Declarations of the token table and the untied LM head (`harness/model/embeddings.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.model.spec.inits import WEIGHT
from harness.model.spec.params import Param, Params

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


def token_embedding(cfg: ModelConfig) -> Params:
    """(V, d), a lookup; when tied it is also the output projection, whose V×d matmul every token pays."""
    logits = cfg.vocab_size * cfg.d_model if cfg.tie_embeddings else 0
    return {"weight": Param((cfg.vocab_size, cfg.d_model), WEIGHT.for_config(cfg), logits)}


def lm_head(cfg: ModelConfig) -> Params:
    """The untied output projection (V, d), bias-free."""
    return {"weight": Param((cfg.vocab_size, cfg.d_model), WEIGHT.for_config(cfg), cfg.vocab_size * cfg.d_model)}
