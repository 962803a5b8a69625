"""GPT-NeoX (Pythia): LayerNorm with β, a parallel residual with two input norms, a fused per-head
query_key_value, a dense GELU MLP; full rotary only."""

from __future__ import annotations

from typing import Any, Mapping

from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.names import table_renamer
from harness.hf.rope import standard_rope_parameters
from harness.hf.source import HFConfig


def attention_bias_everywhere(hf: HFConfig) -> str:
    """GPT-NeoX's MLP and LayerNorms always have biases: it imports only with attention_bias (bias='all')."""
    if not hf.get("attention_bias"):
        hf.refuse("attention_bias=False", "GPT-NeoX's MLP and LayerNorms keep their biases; ours have them only "
                  "with bias='all', which puts them on q, k, v, o too")
    return "all"


def parallel_residual(hf: HFConfig) -> dict[str, Any]:
    """use_parallel_residual: x + attn(N₁(x)) + mlp(N₂(x)); else the sequential pre-norm block."""
    return {"norm_position": "parallel_two_norms" if hf.get("use_parallel_residual") else "pre"}


def legacy_rope(hf: HFConfig) -> Mapping[str, Any]:
    """Its config class still reads the legacy keys, with a 0.25 partial rotary default (which we refuse)."""
    legacy = {"rope_theta": hf.raw.get("rotary_emb_base", 10000.0),
              "partial_rotary_factor": hf.raw.get("rotary_pct", 0.25)}
    return {**legacy, **standard_rope_parameters(hf)}


FAMILY = Family(
    model_type="gpt_neox",
    architectures=("GPTNeoXForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 50432, "hidden_size": 6144, "intermediate_size": 24576,
              "num_hidden_layers": 44, "num_attention_heads": 64, "hidden_act": "gelu", "layer_norm_eps": 1e-5,
              "use_parallel_residual": True, "attention_bias": True},
    switches={"norm": "layernorm"},
    quirks=(parallel_residual,),
    dense_mlp=True,
    norm_eps_key="layer_norm_eps",
    bias=attention_bias_everywhere,
    rope_parameters=legacy_rope,
    rename=table_renamer(
        top={"gpt_neox.embed_in.weight": "tok_emb.weight", "gpt_neox.final_layer_norm.weight": "final_norm.weight",
             "gpt_neox.final_layer_norm.bias": "final_norm.bias", "lm_head.weight": "lm_head.weight"},
        layer_pattern=r"gpt_neox\.layers\.(\d+)\.(.+)",
        # post_attention_layernorm is the MLP's input norm in both blocks (parallel and sequential).
        renames={"input_layernorm": "norm_attn_in", "post_attention_layernorm": "norm_mlp_in",
                 "attention.query_key_value": "attn.qkv_per_head", "attention.dense": "attn.o_proj",
                 "mlp.dense_h_to_4h": "mlp.up_proj", "mlp.dense_4h_to_h": "mlp.down_proj"},
    ),
)
