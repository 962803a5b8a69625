"""Declarations of the token table and the untied LM head (`harness/model/embeddings.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.model.spec.inits import INPUT_WEIGHT, OUTPUT_WEIGHT
from harness.model.spec.params import Params, param

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


def token_embedding(cfg: ModelConfig, layer: None) -> Params:
    """(V, d), a lookup; when tied it is also the output projection, whose V×d matmul every token pays (an
    input weight either way: a tied readout's 1/m under μP is a factor on the logits, not on the table)."""
    logits = cfg.vocab_size * cfg.d_model if cfg.tie_embeddings else 0
    return {"weight": param((cfg.vocab_size, cfg.d_model), INPUT_WEIGHT, cfg, logits)}


def lm_head(cfg: ModelConfig, layer: None) -> Params:
    """The untied output projection (V, d), bias-free: a readout."""
    return {"weight": param((cfg.vocab_size, cfg.d_model), OUTPUT_WEIGHT, cfg, cfg.vocab_size * cfg.d_model)}
