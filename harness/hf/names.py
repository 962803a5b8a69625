"""Hugging Face parameter names → ours (docs/internals.md): the Llama layout most families share, and the
table-driven renaming of families laid out otherwise (GPT-2, GPT-NeoX). Fused projections keep a fused name
(`qkv_proj`, `qkv_per_head`, `gate_up_proj`) that `harness.hf.weights` splits."""

from __future__ import annotations

import re
from typing import Mapping

# StarCoder2 names its dense MLP like GPT-2 (but in nn.Linear layout); the MoE families call the router `gate`.
_MLP_RENAMES = {"c_fc": "up_proj", "c_proj": "down_proj", "gate": "router"}


def llama_layout_name(name: str, layer_norms: Mapping[str, str]) -> str | None:
    """Our name for a Llama-style parameter (`model.layers.3.self_attn.q_proj.weight` →
    `layers.3.attn.q_proj.weight`), with decoder-layer norms placed by `layer_norms`; None without a counterpart."""
    if name == "lm_head.weight":
        return name
    name = name.removeprefix("model.")
    if name == "embed_tokens.weight":
        return "tok_emb.weight"
    if name in ("norm.weight", "norm.bias"):
        return f"final_{name}"
    match = re.fullmatch(r"layers\.(\d+)\.(\w+)\.(.+)", name)
    if match is None:
        return None
    layer, module, rest = match.groups()
    if module == "self_attn":
        return f"layers.{layer}.attn.{rest}"
    if module in ("mlp", "feed_forward"):  # Llama 4 calls its MLP feed_forward
        module_name, _, kind = rest.rpartition(".")
        return f"layers.{layer}.mlp.{_MLP_RENAMES.get(module_name, module_name)}.{kind}"
    slot = layer_norms.get(module)
    return f"layers.{layer}.{slot}.{rest}" if slot else None


def table_renamer(top: Mapping[str, str], layer_pattern: str, renames: Mapping[str, str]):
    """A renamer for a family named by tables: `top` maps whole names, `layer_pattern` (a regex with groups
    (layer, rest)) finds a decoder layer's parameters, `renames` maps their module paths."""
    pattern = re.compile(layer_pattern)

    def rename(name: str) -> str | None:
        if name in top:
            return top[name]
        match = pattern.fullmatch(name)
        if match is None:
            return None
        layer, rest = match.groups()
        module, _, kind = rest.rpartition(".")
        return f"layers.{layer}.{renames[module]}.{kind}" if module in renames else None

    return rename
