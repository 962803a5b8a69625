"""Reading RoPE from a config: its base and scaling, and which layers skip it (NoPE)."""

from __future__ import annotations

from typing import Any, Mapping

from harness.hf.source import HFConfig


def standard_rope_parameters(hf: HFConfig) -> Mapping[str, Any]:
    """The RoPE dict as transformers 5 standardizes it: `rope_scaling` wins over `rope_parameters` (either may
    hold `rope_theta`; a top-level `rope_theta` is the fallback)."""
    return hf.raw.get("rope_scaling") or hf.raw.get("rope_parameters") or {}


def rope_fields(hf: HFConfig) -> dict[str, Any]:
    """RoPE base and scaling of the family's RoPE dict: unscaled ('default') and Llama 3.1's 'llama3' rescaling
    are expressible; any other scaling, partial rotation or per-layer-type dict is refused."""
    params = hf.family.rope_parameters(hf)
    if any(isinstance(value, Mapping) for value in params.values()):
        hf.refuse(f"per-layer-type rope_parameters ({', '.join(params)})", "one RoPE base serves every layer", False)
        params = next(value for value in params.values() if isinstance(value, Mapping))
    rope_type = params.get("rope_type", params.get("type", "default"))
    fields: dict[str, Any] = {"rope_theta": float(params.get("rope_theta", hf.get("rope_theta")))}
    if rope_type == "llama3":
        fields |= {
            "rope_type": "llama3",
            "rope_scaling_factor": float(params["factor"]),
            "rope_low_freq_factor": float(params["low_freq_factor"]),
            "rope_high_freq_factor": float(params["high_freq_factor"]),
            "rope_original_max_seq_len": params.get("original_max_position_embeddings")
            or hf.get("max_position_embeddings"),
        }
    elif rope_type != "default":
        hf.refuse(f"rope_scaling type {rope_type!r}", "only unscaled RoPE ('default') and 'llama3' are expressible",
                  False)
    partial = params.get("partial_rotary_factor", hf.raw.get("partial_rotary_factor", 1.0))
    if partial != 1.0:
        hf.refuse(f"partial_rotary_factor={partial}", "RoPE rotates every channel of the head here", False)
    return fields


def rope_layer_flags(hf: HFConfig) -> list[int]:
    """SmolLM3's and Llama 4's per-layer RoPE flags (1: rotate, 0: NoPE), defaulting to NoPE on every
    interval-th layer."""
    interval = hf.get("no_rope_layer_interval")
    default = [int((i + 1) % interval != 0) for i in range(hf.get("num_hidden_layers"))]
    return hf.get("no_rope_layers") or default


def nope_layers(hf: HFConfig) -> dict[str, Any]:
    """Our nope_every=k for the RoPE flags: NoPE exactly on layers k, 2k, ... (1-based), or 0 for none."""
    uses_rope = rope_layer_flags(hf)
    if all(uses_rope):
        return {"nope_every": 0}
    for every in range(1, len(uses_rope) + 1):
        if all(bool(rope) == ((i + 1) % every != 0) for i, rope in enumerate(uses_rope)):
            return {"nope_every": every}
    hf.refuse(f"no_rope_layers pattern {uses_rope}", "NoPE layers must be every k-th layer (nope_every=k)", False)
    return {"nope_every": 0}
