"""The decoder: embeddings → blocks → final norm → LM head, wired from a `ModelConfig` via the registry."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.attention import Attention
from harness.model.cache import KVCache
from harness.model.moe import Experts, MixtureOfExperts
from harness.model.norms import LayerNorm, RMSNorm
from harness.model.softcap import soft_cap

# Projections that write into the residual stream; GPT-2 scales their init by 1/sqrt(2·n_layers).
OUTPUT_PROJECTIONS = ("attn.o_proj.weight", "mlp.down_proj.weight", "mlp.experts.down_proj")


def build_mlp(cfg: ModelConfig) -> nn.Module:
    """The feed-forward sublayer: one MLP of `cfg.mlp`'s kind, or a routed mixture of such experts."""
    mlp_class, _ = registry.MLPS[cfg.mlp]
    act = registry.activation(cfg)
    if not cfg.is_moe:
        return mlp_class(cfg.d_model, cfg.d_ff, act, bias="mlp" in registry.BIAS[cfg.bias])
    experts = Experts(cfg.n_experts, cfg.d_model, cfg.d_ff, act, gated=cfg.is_glu)
    return MixtureOfExperts(cfg.d_model, cfg.n_experts, cfg.moe_top_k, experts)


def build_block(cfg: ModelConfig, layer: int) -> nn.Module:
    """Layer `layer`: attention and MLP, with norms in the slots `cfg.norm_position` names."""
    attn = Attention(
        cfg, layer, registry.qk_norm(cfg, cfg.n_heads), registry.qk_norm(cfg, cfg.n_kv_heads), registry.BIAS[cfg.bias]
    )
    block_class, slots = registry.NORM_POSITIONS[cfg.norm_position]
    return block_class(attn, build_mlp(cfg), {slot: registry.norm(cfg, cfg.d_model) for slot in slots})


class Transformer(nn.Module):
    """Decoder-only LM. `forward(input_ids (B, T), cache=None) -> logits (B, T, V)`.

    After each forward `aux_loss` holds the mean MoE load-balancing loss over layers (a 0 tensor when dense).
    """

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = registry.POSITIONS[cfg.positions](cfg)
        self.layers = nn.ModuleList(build_block(cfg, i) for i in range(cfg.n_layers))
        self.final_norm = registry.norm(cfg, cfg.d_model) if registry.FINAL_NORM[cfg.norm_position] else nn.Identity()
        self.lm_head = None if cfg.tie_embeddings else nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.aux_loss = torch.zeros(())
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        """normal(init_std) weights, zero biases, identity norms; output projections /sqrt(2·n_layers)."""
        for module in self.modules():
            if isinstance(module, (RMSNorm, LayerNorm)):
                module.reset_parameters()
                continue
            for name, param in module.named_parameters(recurse=False):
                if name == "bias":
                    nn.init.zeros_(param)
                else:
                    nn.init.normal_(param, std=self.cfg.init_std)
        if self.cfg.scaled_init:
            for name, param in self.named_parameters():
                if name.endswith(OUTPUT_PROJECTIONS):
                    param.mul_(1 / math.sqrt(2 * self.cfg.n_layers))

    @property
    def attention_paths(self) -> list[str]:
        """Per layer, the attention kernel that runs: 'sdpa' or 'eager' (soft-cap or sinks)."""
        return [layer.attn.path for layer in self.layers]

    def capture_qk(self, enabled: bool) -> None:
        """Make every attention layer keep its last q and k (after QK-norm and RoPE) for telemetry."""
        for layer in self.layers:
            layer.attn.capture_qk = enabled
            if not enabled:
                layer.attn.captured_q = layer.attn.captured_k = None

    def forward(self, input_ids: torch.Tensor, cache: KVCache | None = None) -> torch.Tensor:
        offset = cache.seq_len if cache is not None else 0
        x = self.tok_emb(input_ids)  # (B, T, d)
        if self.cfg.scale_embeddings:
            # Gemma rounds sqrt(d) to the hidden dtype before multiplying; do the same for parity.
            x = x * torch.tensor(self.cfg.d_model**0.5, dtype=x.dtype, device=x.device)
        x, rotation = self.pos_emb(x, offset)
        for layer in self.layers:
            x = layer(x, rotation, cache)
        x = self.final_norm(x)
        logits = self.lm_head(x) if self.lm_head is not None else F.linear(x, self.tok_emb.weight)  # (B, T, V)
        if self.cfg.final_softcap is not None:
            logits = soft_cap(logits, self.cfg.final_softcap)
        self.aux_loss = self._aux_loss(x)
        return logits

    def _aux_loss(self, x: torch.Tensor) -> torch.Tensor:
        losses = [layer.mlp.aux_loss for layer in self.layers if isinstance(layer.mlp, MixtureOfExperts)]
        return torch.stack(losses).mean() if losses else x.new_zeros((), dtype=torch.float32)
