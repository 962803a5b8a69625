"""Mixtral: a mixture of SwiGLU experts that renormalizes its top-k weights at every k, windows on every layer."""

from __future__ import annotations

from typing import Any

from harness.hf.decoder import fixed_bias
from harness.hf.experts import routed_experts
from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.source import HFConfig
from harness.hf.windows import every_layer


def experts(hf: HFConfig) -> dict[str, Any]:
    """Router jitter is training-time noise with no switch; Mixtral renormalizes even at k = 1."""
    if hf.get("router_jitter_noise"):
        noise = hf.get("router_jitter_noise")
        hf.refuse(f"router_jitter_noise={noise}", "training-time router noise has no switch", False)
    return routed_experts(hf, renormalize=True, count_key="num_local_experts")


FAMILY = Family(
    model_type="mixtral",
    architectures=("MixtralForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-5,
              "max_position_embeddings": 4096 * 32, "rope_theta": 1e6, "sliding_window": None,
              "num_local_experts": 8, "num_experts_per_tok": 2, "router_jitter_noise": 0.0},
    experts=experts,
    module_renames={"mlp.gate": "mlp.router"},
    bias=fixed_bias("none"),
    windows=every_layer,
)
