"""Qwen3-MoE: Qwen3's per-head QK-norm with a mixture of SwiGLU experts of moe_intermediate_size on every layer."""

from __future__ import annotations

from typing import Any

from harness.hf.experts import routed_experts
from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.source import HFConfig
from harness.hf.windows import every_layer_if_enabled


def experts(hf: HFConfig) -> dict[str, Any]:
    """Every layer must be a mixture of experts; norm_topk_prob decides the renormalization."""
    if hf.get("decoder_sparse_step") != 1 or hf.get("mlp_only_layers"):
        hf.refuse(
            f"decoder_sparse_step={hf.get('decoder_sparse_step')}, mlp_only_layers={hf.get('mlp_only_layers')}",
            "every layer must be a mixture of experts (no dense layers in between)",
        )
    return routed_experts(hf, hf.get("norm_topk_prob"), "num_experts", width_key="moe_intermediate_size")


FAMILY = Family(
    model_type="qwen3_moe",
    architectures=("Qwen3MoeForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
              "moe_intermediate_size": 768, "num_hidden_layers": 24, "num_attention_heads": 32,
              "num_key_value_heads": 4, "max_position_embeddings": 32768, "use_sliding_window": False,
              "sliding_window": 4096, "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": False,
              "decoder_sparse_step": 1, "mlp_only_layers": []},
    switches={"qk_norm": "rmsnorm"},
    experts=experts,
    module_renames={"mlp.gate": "mlp.router"},
    windows=every_layer_if_enabled,
)
