"""Copy a transformers causal-LM's weights into our `Transformer`, renaming each tensor into the parameter names
of docs/internals.md (transposing GPT-2's Conv1D weights and splitting fused q/k/v and gate/up projections).

Every Hugging Face parameter must land somewhere and every one of ours must be filled, so a family detail we
do not model (an extra bias, a fifth norm) fails loudly instead of importing a silently different network.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, Iterator

import torch
from torch import nn

from harness.config import ConfigError, ModelConfig
from harness.hf.config import model_config_from_hf
from harness.model import Transformer, build_model

# Per family, the Hugging Face decoder-layer norm → our norm slot (see the slots in docs/internals.md).
_LAYER_NORM_SLOTS: dict[str, dict[str, str]] = {
    "pre": {"input_layernorm": "norm_attn_in", "post_attention_layernorm": "norm_mlp_in"},
    # Gemma 2 wraps both sublayers: pre- and post-norm around each is our sandwich.
    "gemma2": {
        "input_layernorm": "norm_attn_in",
        "post_attention_layernorm": "norm_attn_out",
        "pre_feedforward_layernorm": "norm_mlp_in",
        "post_feedforward_layernorm": "norm_mlp_out",
    },
    # OLMo 2 normalizes only the sublayer outputs (despite the name "post_attention"): our reordered slots.
    "olmo2": {"post_attention_layernorm": "norm_attn_out", "post_feedforward_layernorm": "norm_mlp_out"},
}

_GPT2_LAYER = re.compile(r"transformer\.h\.(\d+)\.(.+)")
_GPT2_RENAMES = {
    "ln_1": "norm_attn_in",
    "attn.c_attn": "attn.qkv_proj",
    "ln_2": "norm_mlp_in",
    "attn.c_proj": "attn.o_proj",
    "mlp.c_fc": "mlp.up_proj",
    "mlp.c_proj": "mlp.down_proj",
}
_GPT_NEOX_LAYER = re.compile(r"gpt_neox\.layers\.(\d+)\.(.+)")
# post_attention_layernorm is the MLP's input norm in both of GPT-NeoX's blocks (parallel and sequential).
_GPT_NEOX_RENAMES = {
    "input_layernorm": "norm_attn_in",
    "post_attention_layernorm": "norm_mlp_in",
    "attention.query_key_value": "attn.qkv_per_head",
    "attention.dense": "attn.o_proj",
    "mlp.dense_h_to_4h": "mlp.up_proj",
    "mlp.dense_4h_to_h": "mlp.down_proj",
}
_GPT_NEOX_TOP = {"gpt_neox.embed_in.weight": "tok_emb.weight", "gpt_neox.final_layer_norm.weight": "final_norm.weight",
                 "gpt_neox.final_layer_norm.bias": "final_norm.bias", "lm_head.weight": "lm_head.weight"}
# StarCoder2 names its dense MLP like GPT-2 (but in nn.Linear layout); the MoE families call the router `gate`.
_MLP_RENAMES = {"c_fc": "up_proj", "c_proj": "down_proj", "gate": "router"}
_GPT2_TOP = {"transformer.wte.weight": "tok_emb.weight", "transformer.wpe.weight": "pos_emb.weight",
             "transformer.ln_f.weight": "final_norm.weight", "transformer.ln_f.bias": "final_norm.bias",
             "lm_head.weight": "lm_head.weight"}


def from_hf(hf_model: Any) -> Transformer:
    """Our model with the weights of a transformers causal LM (GPT-2, GPT-NeoX, Llama, Mistral, Qwen2, Qwen3,
    Gemma, Gemma 2, OLMo 2, Phi-3, StarCoder2, SmolLM3, Mixtral, Qwen3-MoE, OLMoE), in the model's dtype;
    its logits match the original's. Raises ConfigError for what we cannot express."""
    if not (hasattr(hf_model, "config") and isinstance(hf_model, nn.Module)):
        raise ConfigError(f"from_hf expects a transformers model (nn.Module with .config), got {type(hf_model)}.")
    hf_config = hf_model.config.to_dict()
    cfg = model_config_from_hf(hf_config, strict=True)
    hf_params = dict(hf_model.named_parameters())  # tied weights appear once, under the embedding's name
    if "lm_head.weight" not in hf_model.state_dict():
        raise ConfigError(f"from_hf needs a causal-LM model with an LM head, got {type(hf_model).__name__}.")
    family = hf_config["model_type"]
    rename = _TABLE_RENAMES.get(family) or partial(_llama_like_name, family=family)
    unused = [name for name in hf_params if rename(name) is None]
    if unused:
        raise ConfigError(f"Hugging Face {family} parameters with no place in our model: {', '.join(unused[:5])}.")
    state: dict[str, torch.Tensor] = {}
    for name, tensor in hf_params.items():
        ours, tensor = rename(name), tensor.detach()
        if family == "gpt2" and _is_conv1d(ours):
            tensor = tensor.t()  # GPT-2's Conv1D stores (in, out), the transpose of nn.Linear
        if family in _INTERLEAVED_ROPE_FAMILIES and ours.endswith(("attn.q_proj.weight", "attn.k_proj.weight")):
            tensor = _half_split_rows(tensor, cfg.head_dim)
        state.update(_unfused(ours, tensor, cfg))
    model = build_model(cfg)
    model.load_state_dict(state, strict=True)
    return model.to(next(hf_model.parameters()).dtype)


# Families whose RoPE rotates adjacent channel pairs (2i, 2i + 1), as complex numbers, where ours pairs (i, i + D/2).
_INTERLEAVED_ROPE_FAMILIES = ("llama4_text",)


def _half_split_rows(weight: torch.Tensor, head_dim: int) -> torch.Tensor:
    """Reorder each head's output rows of a q or k projection (H·D, d) from interleaved pairs (2i, 2i + 1) to
    half-split pairs (i, i + D/2): even rows first, then odd. Applied to q and k alike, q·kᵀ and a per-head
    norm are unchanged, and our rotate-half RoPE then turns exactly the pairs the original turned."""
    rows, fan_in = weight.shape
    return weight.view(rows // head_dim, head_dim // 2, 2, fan_in).transpose(1, 2).reshape(rows, fan_in)


def _unfused(name: str, tensor: torch.Tensor, cfg: ModelConfig) -> Iterator[tuple[str, torch.Tensor]]:
    """Split fused projections (GPT-2's c_attn, GPT-NeoX's per-head query_key_value, Phi-3's qkv_proj and
    gate_up_proj, the MoE families' stacked
    experts.gate_up_proj (E, 2·f, d)) along their output rows."""
    if ".attn.qkv_per_head." in name:  # GPT-NeoX: output rows grouped by head, [q_h; k_h; v_h] within each
        per_head = tensor.view(cfg.n_heads, 3, cfg.head_dim, *tensor.shape[1:])
        parts = zip(("q_proj", "k_proj", "v_proj"), per_head.unbind(dim=1))
        return ((name.replace("qkv_per_head", part), chunk.reshape(-1, *tensor.shape[1:]).contiguous())
                for part, chunk in parts)
    if ".attn.qkv_proj." in name:
        q_rows, kv_rows = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
        parts = zip(("q_proj", "k_proj", "v_proj"), tensor.split((q_rows, kv_rows, kv_rows), dim=0))
        return ((name.replace("qkv_proj", part), chunk.contiguous()) for part, chunk in parts)
    if ".mlp.gate_up_proj." in name or name.endswith(".mlp.experts.gate_up_proj"):
        # Phi-3 and the experts compute act(gate) · up with gate first along the output rows.
        gate, up = tensor.chunk(2, dim=-2)
        return ((name.replace("gate_up_proj", "gate_proj"), gate.contiguous()),
                (name.replace("gate_up_proj", "up_proj"), up.contiguous()))
    return ((name, tensor.contiguous()),)


def _llama_like_name(name: str, family: str) -> str | None:
    """Our name for a Llama-style parameter (`model.layers.3.self_attn.q_proj.weight` →
    `layers.3.attn.q_proj.weight`), or None when it has no counterpart. Fused projections keep a fused name
    for `_unfused`."""
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
    slot = _LAYER_NORM_SLOTS.get(family, _LAYER_NORM_SLOTS["pre"]).get(module)
    return f"layers.{layer}.{slot}.{rest}" if slot else None


def _table_name(name: str, top: dict[str, str], layer_pattern: re.Pattern, renames: dict[str, str]) -> str | None:
    """Our name for a parameter of a family named by tables (GPT-2, GPT-NeoX), or None without a counterpart."""
    if name in top:
        return top[name]
    match = layer_pattern.fullmatch(name)
    if match is None:
        return None
    layer, rest = match.groups()
    module, _, kind = rest.rpartition(".")
    return f"layers.{layer}.{renames[module]}.{kind}" if module in renames else None


_TABLE_RENAMES = {
    "gpt2": partial(_table_name, top=_GPT2_TOP, layer_pattern=_GPT2_LAYER, renames=_GPT2_RENAMES),
    "gpt_neox": partial(_table_name, top=_GPT_NEOX_TOP, layer_pattern=_GPT_NEOX_LAYER, renames=_GPT_NEOX_RENAMES),
}


def _is_conv1d(name: str) -> bool:
    """GPT-2's projection weights are Conv1D; its embeddings, norms and LM head are not."""
    return name.startswith("layers.") and name.endswith(".weight") and ".norm_" not in name
