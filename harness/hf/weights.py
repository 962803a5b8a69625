"""Copy a transformers causal-LM's weights into our `Transformer`, renaming each tensor into the parameter names
of docs/internals.md as the model's family record says (`harness.hf.family.Family`: `rename`, `layer_norms`,
`adapt_weight`), and splitting fused q/k/v and gate/up projections.

Every Hugging Face parameter must land somewhere and every one of ours must be filled, so a family detail we
do not model (an extra bias, a fifth norm) fails loudly instead of importing a silently different network.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any, cast

import torch
from torch import nn

from errors import ConfigError
from harness.config import ModelConfig
from harness.hf.config import family_of, model_config_from_hf
from harness.hf.names import llama_layout_name
from harness.model import Transformer, build_model


def from_hf(hf_model: Any) -> Transformer:
    """Our model with the weights of a transformers causal LM of any family in `harness.hf.families`, in the
    model's dtype; its logits match the original's. Raises ConfigError for what we cannot express."""
    if not (hasattr(hf_model, "config") and isinstance(hf_model, nn.Module)):
        raise ConfigError(f"from_hf expects a transformers model (nn.Module with .config), got {type(hf_model)}.")
    hf_config = cast(Any, hf_model).config.to_dict()  # a transformers PretrainedConfig (nn.Module knows no .config)
    cfg = model_config_from_hf(hf_config, strict=True)
    hf_params = dict(hf_model.named_parameters())  # tied weights appear once, under the embedding's name
    if "lm_head.weight" not in hf_model.state_dict():
        raise ConfigError(f"from_hf needs a causal-LM model with an LM head, got {type(hf_model).__name__}.")
    family = family_of(hf_config)
    rename = family.rename or partial(
        llama_layout_name, layer_norms=family.layer_norms, module_renames=family.module_renames
    )
    unused = [name for name in hf_params if rename(name) is None]
    if unused:
        raise ConfigError(
            f"Hugging Face {family.model_type} parameters with no place in our model: {', '.join(unused[:5])}."
        )
    state: dict[str, torch.Tensor] = {}
    for name, param in hf_params.items():
        ours, tensor = cast(str, rename(name)), param.detach()  # `unused` is empty: every name has a place
        if family.adapt_weight is not None:
            tensor = family.adapt_weight(ours, tensor, cfg)
        state.update(_unfused(ours, tensor, cfg))
    model = build_model(cfg)
    model.load_state_dict(state, strict=True)
    return model.to(next(hf_model.parameters()).dtype)


def _unfused(name: str, tensor: torch.Tensor, cfg: ModelConfig) -> Iterable[tuple[str, torch.Tensor]]:
    """Split fused projections (GPT-2's c_attn, GPT-NeoX's per-head query_key_value, Phi-3's qkv_proj and
    gate_up_proj, the MoE families' stacked experts.gate_up_proj (E, 2·f, d)) along their output rows."""
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
