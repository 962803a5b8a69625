"""Llama 4's text decoder, dense layers only: iRoPE (NoPE layers from no_rope_layers, a weightless QK-norm
after RoPE on the RoPE layers), dense MLPs of intermediate_size_mlp, interleaved RoPE pairs."""

from __future__ import annotations

from typing import Any

from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.rope import nope_layers
from harness.hf.source import HFConfig


def irope(hf: HFConfig) -> dict[str, Any]:
    """Chunked attention and the NoPE layers' query temperature are refused; use_qk_norm is a weightless norm
    after RoPE."""
    if hf.get("attention_chunk_size") is not None:
        hf.refuse(f"attention_chunk_size={hf.get('attention_chunk_size')}", "chunked attention has no switch", False)
    if hf.get("attn_temperature_tuning"):
        hf.refuse("attn_temperature_tuning=True", "the NoPE layers' query temperature has no switch", False)
    qk_norm = "rmsnorm_noweight" if hf.get("use_qk_norm") else "none"
    placement = {"qk_norm_placement": "irope"} if qk_norm != "none" else {}
    return {"d_ff": hf.get("intermediate_size_mlp"), "qk_norm": qk_norm, **placement}


def dense_layers_only(hf: HFConfig) -> dict[str, Any]:
    """Llama 4 keeps num_local_experts even without MoE layers: only moe_layers=[] imports (its MoE layers'
    sigmoid router and shared expert have no mapping)."""
    if hf.get("moe_layers") is None or hf.get("moe_layers"):
        hf.refuse(f"moe_layers={hf.get('moe_layers')}",
                  "Llama 4's MoE layers (sigmoid router, shared expert) have no mapping; only moe_layers=[] imports")
    return {}


def half_split_rows(name: str, weight: Any, cfg: Any) -> Any:
    """Llama 4 rotates adjacent channel pairs (2i, 2i + 1) where our RoPE pairs (i, i + D/2): reorder each head's
    output rows of q and k (H·D, d) to even rows, then odd. Applied to q and k alike, q·kᵀ and a per-head norm
    are unchanged, and our rotate-half RoPE then turns exactly the pairs the original turned."""
    if not name.endswith(("attn.q_proj.weight", "attn.k_proj.weight")):
        return weight
    rows, fan_in = weight.shape
    return weight.view(rows // cfg.head_dim, cfg.head_dim // 2, 2, fan_in).transpose(1, 2).reshape(rows, fan_in)


FAMILY = Family(
    model_type="llama4_text",
    architectures=("Llama4ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
              "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
              "num_key_value_heads": 8, "head_dim": 128, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
              "max_position_embeddings": 4096 * 32, "no_rope_layers": None, "no_rope_layer_interval": 4,
              "use_qk_norm": True, "moe_layers": None, "attention_chunk_size": 8192,
              "attn_temperature_tuning": True},
    quirks=(nope_layers, irope),
    experts=dense_layers_only,
    module_renames={f"feed_forward.{proj}": f"mlp.{proj}" for proj in ("gate_proj", "up_proj", "down_proj")},
    adapt_weight=half_split_rows,
)
