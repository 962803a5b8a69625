"""OLMoE: pre-norm blocks with OLMo 2's QK-norm over all heads at once, and a mixture of SwiGLU experts."""

from __future__ import annotations

from typing import Any

from harness.hf.experts import routed_experts
from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.source import HFConfig


def experts(hf: HFConfig) -> dict[str, Any]:
    """clip_qkv (clamping q, k and v) has no switch; norm_topk_prob decides the renormalization."""
    if hf.get("clip_qkv") is not None:
        hf.refuse(f"clip_qkv={hf.get('clip_qkv')}", "clamping q, k and v has no switch", False)
    return routed_experts(hf, hf.get("norm_topk_prob"), "num_experts")


FAMILY = Family(
    model_type="olmoe",
    architectures=("OlmoeForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 2048,
              "num_hidden_layers": 16, "num_attention_heads": 16, "rms_norm_eps": 1e-5,
              "max_position_embeddings": 4096, "num_experts": 64, "num_experts_per_tok": 8,
              "norm_topk_prob": False, "clip_qkv": None},
    switches={"qk_norm": "rmsnorm", "qk_norm_scope": "full"},
    experts=experts,
    module_renames={"mlp.gate": "mlp.router"},
)
