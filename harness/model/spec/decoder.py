"""The declaration of a whole decoder, assembled from its components' declarations through the registry.

Names are full parameter names (docs/internals.md), so `decoder(cfg)` equals `build_model(cfg)`'s
`named_parameters()` in names, shapes and initialization; calc counts from it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.model import registry
from harness.model.spec import attention as attention_spec
from harness.model.spec import embeddings as embeddings_spec
from harness.model.spec import mlp as mlp_spec
from harness.model.spec.params import Params, prefixed

if TYPE_CHECKING:
    from harness.config.model import ModelConfig


def norm(cfg: ModelConfig, width: int, kind: str | None = None) -> Params:
    """A `kind` (default `cfg.norm`) norm over `width` channels."""
    return registry.NORMS[kind or cfg.norm].params(cfg, width)


def qk_norm_widths(cfg: ModelConfig, layer: int) -> tuple[int, int] | None:
    """(q width, k width) of `layer`'s QK-norms, or None when the layer has none."""
    if cfg.qk_norm == "none" or not cfg.layer_has_qk_norm(layer):
        return None
    width = attention_spec.QK_NORM_WIDTH[cfg.qk_norm_scope]
    return width(cfg, cfg.n_heads), width(cfg, cfg.n_kv_heads)


def attention(cfg: ModelConfig, layer: int) -> Params:
    """Projections, sinks and the q/k norms of `layer`."""
    params = attention_spec.projections(cfg)
    widths = qk_norm_widths(cfg, layer)
    if widths is not None:
        params |= prefixed("q_norm", norm(cfg, widths[0], cfg.qk_norm))
        params |= prefixed("k_norm", norm(cfg, widths[1], cfg.qk_norm))
    return params


def ffn(cfg: ModelConfig) -> Params:
    """The MLP sublayer: one MLP of `cfg.mlp`'s kind, or a router and experts of that kind."""
    kind = registry.MLPS[cfg.mlp]
    if not cfg.is_moe:
        return kind.params(cfg)
    return mlp_spec.router(cfg) | prefixed("experts", mlp_spec.experts(cfg, kind.gated))


def block(cfg: ModelConfig, layer: int) -> Params:
    """Block `layer`: attention, MLP sublayer and the norms of its placement's slots."""
    params = prefixed("attn", attention(cfg, layer)) | prefixed("mlp", ffn(cfg))
    for slot in registry.NORM_POSITIONS[cfg.norm_position].slots:
        params |= prefixed(slot, norm(cfg, cfg.d_model))
    return params


def embeddings(cfg: ModelConfig) -> Params:
    """The token table and an untied LM head. The logits are a V×d matmul every token pays, charged to the
    table when tied."""
    params = prefixed("tok_emb", embeddings_spec.token_embedding(cfg))
    return params if cfg.tie_embeddings else params | prefixed("lm_head", embeddings_spec.lm_head(cfg))


def final_norm(cfg: ModelConfig) -> Params:
    """The norm after the last block, for every placement that needs one."""
    return norm(cfg, cfg.d_model) if registry.NORM_POSITIONS[cfg.norm_position].final_norm else {}


def decoder(cfg: ModelConfig) -> Params:
    """Every parameter of the model, by full name."""
    head = embeddings(cfg)
    params = {"tok_emb.weight": head.pop("tok_emb.weight")}  # the table first and the head last: module order
    params |= prefixed("pos_emb", registry.POSITIONS[cfg.positions].params(cfg))
    for layer in range(cfg.n_layers):
        params |= prefixed(f"layers.{layer}", block(cfg, layer))
    params |= prefixed("final_norm", final_norm(cfg))
    return params | head
