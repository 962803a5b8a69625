"""Gemma 3's text decoder (`Gemma3ForCausalLM`): Gemma 2's sandwich of 1 + w norms and query_pre_attn_scalar,
with a per-head QK-norm instead of attention soft-capping, 5 local : 1 global layers (`sliding_window_pattern`),
and a RoPE base per layer type (local `rope_local_base_freq`, global `rope_theta`)."""

from __future__ import annotations

from typing import Any, Mapping

from harness.hf.decoder import causal_only
from harness.hf.families.gemma2 import query_pre_attn_scale
from harness.hf.family import ROTARY_DEFAULTS, SANDWICH_NORM_SLOTS, Family
from harness.hf.source import HFConfig
from harness.hf.windows import Windows, alternating


def rope_of_layer_type(hf: HFConfig, layer_type: str) -> Mapping[str, Any]:
    """The RoPE dict of `full_attention` or `sliding_attention` layers as Gemma3TextConfig builds it (a legacy
    `rope_scaling` joins the global layers', `rope_theta` / `rope_local_base_freq` fill in the bases); a scaling
    is refused, naming the key: Gemma 3 4B–27B scale their global layers linearly, which has no switch here."""
    params = dict((hf.raw.get("rope_parameters") or {}).get(layer_type) or {})
    if layer_type == "full_attention":
        params |= hf.raw.get("rope_scaling") or {}
    params.setdefault("rope_theta", hf.get("rope_theta" if layer_type == "full_attention" else "rope_local_base_freq"))
    rope_type = params.get("rope_type", params.get("type", "default"))
    if rope_type != "default":
        hf.refuse(f"rope_parameters[{layer_type!r}] of rope_type {rope_type!r} (a legacy config's rope_scaling)",
                  "Gemma 3 imports with unscaled RoPE on both layer types only", False)
    return params


def global_rope(hf: HFConfig) -> Mapping[str, Any]:
    """The RoPE dict our rope_theta (and every global layer) takes."""
    return rope_of_layer_type(hf, "full_attention")


def local_rope_theta(hf: HFConfig) -> dict[str, Any]:
    """rope_local_theta for the sliding-window layers; None without them or when it equals the global base."""
    theta = float(rope_of_layer_type(hf, "sliding_attention")["rope_theta"])
    has_local_layers = five_local_one_global(hf)[0] is not None
    global_theta = float(global_rope(hf)["rope_theta"])
    return {"rope_local_theta": theta if has_local_layers and theta != global_theta else None}


def final_cap_only(hf: HFConfig) -> dict[str, Any]:
    """Gemma3ForCausalLM soft-caps its logits with final_logit_softcapping; its attention never applies
    attn_logit_softcapping (the config keeps the key), so a config that sets it is ambiguous and refused."""
    if hf.get("attn_logit_softcapping") is not None:
        hf.refuse(f"attn_logit_softcapping={hf.get('attn_logit_softcapping')}",
                  "transformers' Gemma 3 attention ignores it, so it is unclear what the model computes; set it to "
                  "null", False)
    return {"final_softcap": hf.get("final_logit_softcapping")}


def five_local_one_global(hf: HFConfig) -> Windows:
    """Without layer_types, every sliding_window_pattern-th layer is global (6: five local, one global)."""
    return alternating(hf.get("sliding_window_pattern"), hf)


FAMILY = Family(
    model_type="gemma3_text",
    architectures=("Gemma3ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
              "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
              "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 131072,
              "tie_word_embeddings": True, "query_pre_attn_scalar": 256, "sliding_window": 4096,
              "sliding_window_pattern": 6, "layer_types": None, "final_logit_softcapping": None,
              "attn_logit_softcapping": None, "use_bidirectional_attention": False, "rope_theta": 1_000_000.0,
              "rope_local_base_freq": 10_000.0},
    switches={"norm_position": "sandwich", "norm_unit_offset": True, "scale_embeddings": True, "qk_norm": "rmsnorm"},
    quirks=(causal_only, query_pre_attn_scale, final_cap_only, local_rope_theta),
    activation_key="hidden_activation",
    rope_parameters=global_rope,
    windows=five_local_one_global,
    layer_norms=SANDWICH_NORM_SLOTS,
)
