"""Hugging Face parameter names → ours (docs/internals.md): the Llama layout most families share, and the
table-driven renaming of families laid out otherwise (GPT-2, GPT-NeoX). Fused projections keep a fused name
(`qkv_proj`, `qkv_per_head`, `gate_up_proj`) that `harness.hf.weights` splits."""

from __future__ import annotations

import re
from typing import Mapping


def llama_layout_name(
    name: str, layer_norms: Mapping[str, str], module_renames: Mapping[str, str]
) -> str | None:
    """Our name for a Llama-style parameter (`model.layers.3.self_attn.q_proj.weight` →
    `layers.3.attn.q_proj.weight`): a decoder layer's module path is first renamed by `module_renames`, then
    `self_attn` becomes `attn`, `mlp` stays, and norms go to the slots `layer_norms` names; None without a
    counterpart."""
    if name == "lm_head.weight":
        return name
    name = name.removeprefix("model.")
    if name == "embed_tokens.weight":
        return "tok_emb.weight"
    if name in ("norm.weight", "norm.bias"):
        return f"final_{name}"
    match = re.fullmatch(r"layers\.(\d+)\.(.+)\.(\w+)", name)  # (layer, module path, tensor)
    if match is None:
        return None
    layer, module, tensor = match.groups()
    module = module_renames.get(module, module)
    sublayer = module.partition(".")[0]
    if sublayer in ("self_attn", "mlp"):
        return f"layers.{layer}.{module.replace('self_attn', 'attn', 1)}.{tensor}"
    slot = layer_norms.get(module)
    return f"layers.{layer}.{slot}.{tensor}" if slot else None


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
