"""Gemma 2: Gemma's norms in a sandwich, soft-capped attention and logits, query_pre_attn_scalar, and sliding
windows on every other layer."""

from __future__ import annotations

from typing import Any

from harness.hf.decoder import causal_only, head_dim
from harness.hf.family import ROTARY_DEFAULTS, SANDWICH_NORM_SLOTS, Family
from harness.hf.source import HFConfig
from harness.hf.windows import Windows, alternating


def query_pre_attn_scale(hf: HFConfig) -> dict[str, Any]:
    """attn_scale = query_pre_attn_scalar ** -0.5; None when that is the default 1/sqrt(head_dim), so configs
    compare equal."""
    scalar = hf.get("query_pre_attn_scalar")
    return {"attn_scale": None if scalar == head_dim(hf) else scalar**-0.5}


def soft_caps(hf: HFConfig) -> dict[str, Any]:
    """Both of Gemma 2's soft-caps: on attention logits and on the output logits."""
    return {"attn_softcap": hf.get("attn_logit_softcapping"), "final_softcap": hf.get("final_logit_softcapping")}


def every_other_layer_local(hf: HFConfig) -> Windows:
    """Without layer_types, Gemma 2 alternates local and global layers, the first local."""
    return alternating(2, hf)


FAMILY = Family(
    model_type="gemma2",
    architectures=("Gemma2ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
              "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
              "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 8192,
              "tie_word_embeddings": True, "query_pre_attn_scalar": 256, "sliding_window": 4096,
              "layer_types": None, "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0,
              "use_bidirectional_attention": None},
    switches={"norm_position": "sandwich", "norm_unit_offset": True, "scale_embeddings": True},
    quirks=(causal_only, query_pre_attn_scale, soft_caps),
    activation_key="hidden_activation",
    windows=every_other_layer_local,
    layer_norms=SANDWICH_NORM_SLOTS,
)
