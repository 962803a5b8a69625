"""Reading a routed mixture of experts (softmax router, top-k, optional renormalization, no shared experts):
the part Mixtral, Qwen3-MoE and OLMoE share."""

from __future__ import annotations

from typing import Any

from harness.hf.source import HFConfig


def routed_experts(
    hf: HFConfig, renormalize: bool, count_key: str, width_key: str = "intermediate_size"
) -> dict[str, Any]:
    """Experts, top-k, renormalization and each expert's width. The aux loss takes their convention (Switch /
    Mixtral's f_e), so their router_aux_loss_coef means what it meant as our moe_aux_coef. `count_key` is the
    family's own name for the expert count, used when the dict has neither spelling (transformers 5 writes
    Qwen3-MoE's num_experts as num_local_experts; older hub files say num_experts)."""
    count_key = next((key for key in ("num_local_experts", "num_experts") if key in hf.raw), count_key)
    return {
        "n_experts": hf.get(count_key),
        "moe_top_k": hf.get("num_experts_per_tok"),
        "d_ff": hf.get(width_key),
        "moe_topk_norm": "renormalize" if renormalize else "none",
        "moe_aux_loss": "switch",
    }
