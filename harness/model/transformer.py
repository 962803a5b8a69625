"""The decoder: embeddings → blocks → final norm → LM head, wired from a `ModelConfig` via the registry."""

from __future__ import annotations

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.attention import Attention
from harness.model.cache import KVCache
from harness.model.component import Component
from harness.model.embeddings import LMHead, TokenEmbedding
from harness.model.moe import Experts, MixtureOfExperts
from harness.model.softcap import soft_cap
from harness.model.spec import decoder as spec
from harness.model.spec.parametrization import embedding_factor, readout_multiplier


def build_norm(cfg: ModelConfig, layer: int | None, width: int, kind: str | None = None) -> nn.Module:
    """A `kind` (default `cfg.norm`) norm over `width` channels in `layer` (None: the final norm), from its
    registry entry."""
    return registry.NORMS[kind or cfg.norm].build(cfg, layer, width)


def build_qk_norms(cfg: ModelConfig, layer: int) -> tuple[nn.Module, nn.Module]:
    """The q and k norms of `layer` (Identity where the layer has no QK-norm)."""
    widths = spec.qk_norm_widths(cfg, layer)
    if widths is None:
        return nn.Identity(), nn.Identity()
    return build_norm(cfg, layer, widths[0], cfg.qk_norm), build_norm(cfg, layer, widths[1], cfg.qk_norm)


def build_mlp(cfg: ModelConfig, layer: int) -> nn.Module:
    """The feed-forward sublayer of `layer`: one MLP of `cfg.mlp`'s kind, or a routed mixture of such experts."""
    kind = registry.MLPS[cfg.mlp]
    if not cfg.is_moe:
        return kind.build(cfg, layer)
    experts = Experts(cfg, layer, registry.EXPERTS.declared(cfg, layer, kind.gated))
    return MixtureOfExperts(cfg, layer, registry.MOE_ROUTER.declared(cfg, layer), experts)


def build_block(cfg: ModelConfig, layer: int) -> nn.Module:
    """Layer `layer`: attention and MLP, with norms in the slots `cfg.norm_position` names."""
    attn = Attention(cfg, layer, registry.ATTENTION.declared(cfg, layer), *build_qk_norms(cfg, layer))
    placement = registry.NORM_POSITIONS[cfg.norm_position]
    norms = {slot: build_norm(cfg, layer, cfg.d_model) for slot in placement.slots}
    return registry.resolve(placement.module)(attn, build_mlp(cfg, layer), norms)


class Transformer(nn.Module):
    """Decoder-only LM. `forward(input_ids (B, T), cache=None) -> logits (B, T, V)`.

    After each forward `aux_loss` holds the mean MoE load-balancing loss over layers (a 0 tensor when dense).
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_emb = TokenEmbedding(cfg, None, registry.TOKEN_EMBEDDING.declared(cfg, None))
        self.pos_emb = registry.POSITIONS[cfg.positions].build(cfg, None)
        self.layers = nn.ModuleList(build_block(cfg, i) for i in range(cfg.n_layers))
        final_norm = registry.NORM_POSITIONS[cfg.norm_position].final_norm
        self.final_norm = build_norm(cfg, None, cfg.d_model) if final_norm else nn.Identity()
        self.lm_head = None if cfg.tie_embeddings else LMHead(cfg, None, registry.LM_HEAD.declared(cfg, None))
        self.aux_loss = torch.zeros(())
        self.logit_multiplier = readout_multiplier(cfg)  # 1/m under μP (MuReadout), tied or not
        self.embedding_factor = embedding_factor(cfg)  # once, not per forward
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every component initializes the tensors it declares, in module order; see
        `harness.model.spec.inits` for the rules (normal(init_std), output projections / sqrt(2·n_layers),
        zero biases, identity norms) and `harness.model.registry` for what each component documents."""
        declared: set[str] = set()
        for prefix, module in self.named_modules():
            if isinstance(module, Component):
                module.reset_parameters()
                declared |= {f"{prefix}.{name}".removeprefix(".") for name in module.declared}
        # A tensor nobody declares would keep PyTorch's default init and be missing from calc: refuse it.
        undeclared = [name for name, _ in self.named_parameters() if name not in declared]
        if undeclared:
            raise TypeError(f"parameters without a declaration (harness.model.spec): {', '.join(undeclared)}")

    @property
    def attentions(self) -> list[Attention]:
        """Each layer's attention, in order (nn.ModuleList types its blocks, and so their `attn`, as bare
        modules; `build_block` gives every block an Attention)."""
        return [cast(Attention, layer.attn) for layer in self.layers]

    @property
    def attention_paths(self) -> list[str]:
        """Per layer, the attention kernel that runs: 'sdpa' or 'eager' (soft-cap or sinks)."""
        return [attn.path for attn in self.attentions]

    def capture_qk(self, enabled: bool) -> None:
        """Make every attention layer keep its last q and k (after QK-norm and RoPE) for telemetry."""
        for attn in self.attentions:
            attn.capture_qk = enabled
            if not enabled:
                attn.captured_q = attn.captured_k = None

    def forward(self, input_ids: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        offset = cache.seq_len if cache is not None else 0
        x = self.tok_emb(input_ids)  # (B, T, d)
        if self.cfg.scale_embeddings:
            # Gemma rounds sqrt(d) to the hidden dtype before multiplying; do the same for parity.
            x = x * torch.tensor(self.embedding_factor, dtype=x.dtype, device=x.device)
        x, rotation = self.pos_emb(x, offset)
        # Gemma 3: sliding-window layers rotate by their own base (rope_local_theta).
        local = self.pos_emb.local_rotation(x, offset) if self.cfg.rope_local_theta is not None else rotation
        for i, layer in enumerate(self.layers):
            x = layer(x, local if self.cfg.layer_uses_local_rope(i) else rotation, cache)
        x = self.final_norm(x)
        if self.logit_multiplier != 1.0:
            x = x * self.logit_multiplier  # on the readout's input, as MuReadout does: d multiplies, not V
        logits = self.lm_head(x) if self.lm_head is not None else F.linear(x, self.tok_emb.weight)  # (B, T, V)
        if self.cfg.final_softcap is not None:
            logits = soft_cap(logits, self.cfg.final_softcap)
        self.aux_loss = self._aux_loss(x)
        return logits

    def _aux_loss(self, x: torch.Tensor) -> torch.Tensor:
        losses = [layer.mlp.aux_loss for layer in self.layers if isinstance(layer.mlp, MixtureOfExperts)]
        return torch.stack(losses).mean() if losses else x.new_zeros((), dtype=torch.float32)
