"""Copy a transformers causal-LM's weights into our `Transformer`, renaming (and for GPT-2 transposing and
splitting) each tensor into the parameter names of docs/internals.md.

Every Hugging Face parameter must land somewhere and every one of ours must be filled, so a family detail we
do not model (an extra bias, a fifth norm) fails loudly instead of importing a silently different network.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any, Iterator

import torch
from torch import nn

from harness.config import ConfigError
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
    "ln_2": "norm_mlp_in",
    "attn.c_proj": "attn.o_proj",
    "mlp.c_fc": "mlp.up_proj",
    "mlp.c_proj": "mlp.down_proj",
}
_GPT2_TOP = {"transformer.wte.weight": "tok_emb.weight", "transformer.wpe.weight": "pos_emb.weight",
             "transformer.ln_f.weight": "final_norm.weight", "transformer.ln_f.bias": "final_norm.bias"}


def from_hf(hf_model: Any) -> Transformer:
    """Our model with the weights of a transformers causal LM (`GPT2LMHeadModel`, `LlamaForCausalLM`,
    `MistralForCausalLM`, `Qwen2/Qwen3ForCausalLM`, `Gemma/Gemma2ForCausalLM`, `Olmo2ForCausalLM`), in the
    Hugging Face model's dtype; its logits match the original's. Raises ConfigError for what we cannot express."""
    if not (hasattr(hf_model, "config") and isinstance(hf_model, nn.Module)):
        raise ConfigError(f"from_hf expects a transformers model (nn.Module with .config), got {type(hf_model).__name__}.")
    hf_config = hf_model.config.to_dict()
    cfg = model_config_from_hf(hf_config, strict=True)
    hf_params = dict(hf_model.named_parameters())  # tied weights appear once, under the embedding's name
    if "lm_head.weight" not in hf_model.state_dict():
        raise ConfigError(f"from_hf needs a causal-LM model with an LM head, got {type(hf_model).__name__}.")
    family = hf_config["model_type"]
    rename = _gpt2_name if family == "gpt2" else partial(_llama_like_name, family=family)
    unused = [name for name in hf_params if rename(name) is None]
    if unused:
        raise ConfigError(f"Hugging Face {family} parameters with no place in our model: {', '.join(unused[:5])}.")
    tensors = _gpt2_tensors(hf_params) if family == "gpt2" else _llama_like_tensors(hf_params, family)
    model = build_model(cfg)
    model.load_state_dict(dict(tensors), strict=True)
    return model.to(next(hf_model.parameters()).dtype)


def _llama_like_name(name: str, family: str) -> str | None:
    """Our name for a Llama-style parameter (`model.layers.3.self_attn.q_proj.weight` → `layers.3.attn.q_proj.weight`)."""
    if name == "lm_head.weight":
        return name
    name = name.removeprefix("model.")
    if name == "embed_tokens.weight":
        return "tok_emb.weight"
    if name == "norm.weight":
        return "final_norm.weight"
    match = re.fullmatch(r"layers\.(\d+)\.(\w+)\.(.+)", name)
    if match is None:
        return None
    layer, module, rest = match.groups()
    if module == "self_attn":
        return f"layers.{layer}.attn.{rest}"
    if module == "mlp":
        return f"layers.{layer}.mlp.{rest}"
    slot = _LAYER_NORM_SLOTS.get(family, _LAYER_NORM_SLOTS["pre"]).get(module)
    return f"layers.{layer}.{slot}.{rest}" if slot else None


def _llama_like_tensors(hf_params: dict[str, torch.Tensor], family: str) -> Iterator[tuple[str, torch.Tensor]]:
    for name, tensor in hf_params.items():
        ours = _llama_like_name(name, family)
        if ours is not None:
            yield ours, tensor.detach()


def _gpt2_name(name: str) -> str | None:
    """Our name for a GPT-2 parameter; the fused `c_attn` maps to q_proj (its split is done by `_gpt2_tensors`)."""
    if name in _GPT2_TOP or name == "lm_head.weight":
        return _GPT2_TOP.get(name, name)
    match = _GPT2_LAYER.fullmatch(name)
    if match is None:
        return None
    layer, rest = match.groups()
    module, _, kind = rest.rpartition(".")
    if module == "attn.c_attn":
        return f"layers.{layer}.attn.q_proj.{kind}"
    return f"layers.{layer}.{_GPT2_RENAMES[module]}.{kind}" if module in _GPT2_RENAMES else None


def _gpt2_tensors(hf_params: dict[str, torch.Tensor]) -> Iterator[tuple[str, torch.Tensor]]:
    """GPT-2's Conv1D stores (in, out), the transpose of nn.Linear; `c_attn` is q, k and v fused along out."""
    for name, tensor in hf_params.items():
        ours = _gpt2_name(name)
        if ours is None:
            continue
        tensor = tensor.detach()
        is_conv1d = ours.startswith("layers.") and ours.endswith(".weight") and ".norm_" not in ours
        if is_conv1d:
            tensor = tensor.t()  # (out, in)
        if ".attn.q_proj." in ours:
            for part, chunk in zip("qkv", tensor.chunk(3, dim=0)):  # (d, ·) each, or (d,) for the bias
                yield ours.replace(".q_proj.", f".{part}_proj."), chunk.contiguous()
        else:
            yield ours, tensor.contiguous()
