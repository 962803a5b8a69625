"""The declaration of a whole decoder, assembled from its parts' declarations through the registry.

Names are full parameter names (docs/internals.md), so `decoder(cfg)` equals `build_model(cfg)`'s
`named_parameters()` in names, shapes and initialization; calc counts from it. Every function takes the
`view` it reads each registry part through: `declared` (the default: the part's declaration) or
`documented` (the same tensors, each with the init the part's registry entry documents; the registry tests
compare the two).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from harness.model import registry
from harness.model.spec import attention as attention_spec
from harness.model.spec.parametrization import lr_multiplier
from harness.model.spec.params import Params, prefixed

if TYPE_CHECKING:
    from harness.config.model import ModelConfig

View = Callable[..., Params]  # (part, cfg, *args) -> Params
declared: View = registry.Part.declared
documented: View = registry.Part.documented


def norm(cfg: ModelConfig, layer: int | None, width: int, kind: str | None = None, view: View = declared) -> Params:
    """A `kind` (default `cfg.norm`) norm over `width` channels in `layer` (None: the final norm)."""
    return view(registry.NORMS[kind or cfg.norm], cfg, layer, width)


def qk_norm_widths(cfg: ModelConfig, layer: int) -> tuple[int, int] | None:
    """(q width, k width) of `layer`'s QK-norms, or None when the layer has none."""
    if cfg.qk_norm == "none" or not cfg.layer_has_qk_norm(layer):
        return None
    width = attention_spec.QK_NORM_WIDTH[cfg.qk_norm_scope]
    return width(cfg, cfg.n_heads), width(cfg, cfg.n_kv_heads)


def attention(cfg: ModelConfig, layer: int, view: View = declared) -> Params:
    """Projections, sinks and the q/k norms of `layer`."""
    params = view(registry.ATTENTION, cfg, layer)
    widths = qk_norm_widths(cfg, layer)
    if widths is not None:
        params |= prefixed("q_norm", norm(cfg, layer, widths[0], cfg.qk_norm, view))
        params |= prefixed("k_norm", norm(cfg, layer, widths[1], cfg.qk_norm, view))
    return params


def ffn(cfg: ModelConfig, layer: int, view: View = declared) -> Params:
    """The MLP sublayer of `layer`: one MLP of `cfg.mlp`'s kind, or a router and experts of that kind."""
    kind = registry.MLPS[cfg.mlp]
    if not cfg.is_moe:
        return view(kind, cfg, layer)
    experts = view(registry.EXPERTS, cfg, layer, kind.gated)
    return view(registry.MOE_ROUTER, cfg, layer) | prefixed("experts", experts)


def block(cfg: ModelConfig, layer: int, view: View = declared) -> Params:
    """Block `layer`: attention, MLP sublayer and the norms of its placement's slots."""
    params = prefixed("attn", attention(cfg, layer, view)) | prefixed("mlp", ffn(cfg, layer, view))
    for slot in registry.NORM_POSITIONS[cfg.norm_position].slots:
        params |= prefixed(slot, norm(cfg, layer, cfg.d_model, view=view))
    return params


def embeddings(cfg: ModelConfig, view: View = declared) -> Params:
    """The token table and an untied LM head. The logits are a V×d matmul every token pays, charged to the
    table when tied."""
    params = prefixed("tok_emb", view(registry.TOKEN_EMBEDDING, cfg, None))
    return params if cfg.tie_embeddings else params | prefixed("lm_head", view(registry.LM_HEAD, cfg, None))


def positions(cfg: ModelConfig, view: View = declared) -> Params:
    """The position encoding's tensors (a learned table, or none)."""
    return view(registry.POSITIONS[cfg.positions], cfg, None)


def final_norm(cfg: ModelConfig, view: View = declared) -> Params:
    """The norm after the last block, for every placement that needs one."""
    return norm(cfg, None, cfg.d_model, view=view) if registry.NORM_POSITIONS[cfg.norm_position].final_norm else {}


def decoder(cfg: ModelConfig, view: View = declared) -> Params:
    """Every parameter of the model, by full name."""
    head = embeddings(cfg, view)
    params = {"tok_emb.weight": head.pop("tok_emb.weight")}  # the table first and the head last: module order
    params |= prefixed("pos_emb", positions(cfg, view))
    for layer in range(cfg.n_layers):
        params |= prefixed(f"layers.{layer}", block(cfg, layer, view))
    params |= prefixed("final_norm", final_norm(cfg, view))
    return params | head


def parts(cfg: ModelConfig) -> list[registry.Part]:
    """The registry parts a model of `cfg` is built from (each once): embeddings, positions, attention, the
    norms (block, final and QK), the MLP kind (also the experts' kind) and, with experts, router and experts."""
    found = [registry.TOKEN_EMBEDDING, registry.POSITIONS[cfg.positions], registry.ATTENTION,
             registry.NORMS[cfg.norm], registry.MLPS[cfg.mlp]]
    if not cfg.tie_embeddings:
        found.append(registry.LM_HEAD)
    if any(qk_norm_widths(cfg, layer) is not None for layer in range(cfg.n_layers)):
        found.append(registry.NORMS[cfg.qk_norm])
    if cfg.is_moe:
        found += [registry.MOE_ROUTER, registry.EXPERTS]
    return found


def unread_fields(cfg: ModelConfig) -> set[str]:
    """The fields that some registered part declares it reads (`Part.reads`) and no part of `cfg` does: they
    cannot change this model (gelu_approximate beside SwiGLU). Every other field is read."""
    declared_somewhere = {name for part in registry.parts() for name in part.reads}
    return declared_somewhere - {name for part in parts(cfg) for name in part.reads}


def lr_multipliers(cfg: ModelConfig) -> dict[str, float]:
    """Every parameter's factor on the peak Adam LR, by full name, from its declared role: 1 everywhere under the
    standard parametrization; under μP 1/m for the hidden matrices (m = d_model / mup_base_width)."""
    return {name: lr_multiplier(cfg, param.role) for name, param in decoder(cfg).items()}
