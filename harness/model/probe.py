"""Exact per-head maximum attention logit (the stability signal of Wortsman et al. 2023 / Dehghani et al. 2023).

Recomputes q·kᵀ·scale from the q and k each layer captured (after QK-norm and RoPE) over the positions the
mask allows, in query chunks so memory stays at chunk × T per head rather than T × T.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from harness.model.attention import Attention, allowed_keys
from harness.model.softcap import soft_cap
from harness.model.transformer import Transformer

CHUNK_ELEMENTS = 1 << 24  # score elements per chunk (64 MiB in float32)


@dataclass(frozen=True)
class MaxAttentionLogits:
    """`raw` (n_layers, n_heads): max logit before the soft-cap; `capped`: after it (None when no cap)."""

    raw: torch.Tensor
    capped: torch.Tensor | None


def _layer_max(attn: Attention) -> torch.Tensor:
    """(H,) max over batch, allowed (query, key) pairs of this layer's captured q·kᵀ·scale."""
    q, k = (t.float() for t in attn.captured())  # (B, H, T, D), (B, Hkv, T, D)
    batch, n_heads, seq, dim = q.shape
    groups = n_heads // k.shape[1]
    q = q.view(batch, k.shape[1], groups, seq, dim)  # (B, Hkv, G, T, D)
    chunk = max(1, CHUNK_ELEMENTS // (batch * n_heads * seq))
    best = torch.full((n_heads,), float("-inf"), device=q.device)
    for start in range(0, seq, chunk):
        stop = min(start + chunk, seq)
        # Causal: queries [start, stop) are the last of keys [0, stop) and see nothing beyond.
        scores = q[:, :, :, start:stop] @ k[:, :, None, :stop].transpose(-1, -2) * attn.scale  # (B, Hkv, G, c, stop)
        scores = scores.masked_fill(~allowed_keys(stop - start, stop, attn.window, q.device), float("-inf"))
        best = torch.maximum(best, scores.amax(dim=(0, 3, 4)).reshape(n_heads))
    return best


@torch.no_grad()
def max_attention_logits(model: Transformer, input_ids: torch.Tensor) -> MaxAttentionLogits:
    """Per layer and head, the max pre-softmax attention logit on `input_ids` (B, T), before and after capping."""
    captured_before = [attn.capture_qk for attn in model.attentions]
    model.capture_qk(True)
    try:
        model(input_ids)
        raw = torch.stack([_layer_max(attn) for attn in model.attentions])  # (L, H)
    finally:
        model.capture_qk(False)
        for attn, enabled in zip(model.attentions, captured_before):
            attn.capture_qk = enabled
    cap = model.cfg.attn_softcap
    return MaxAttentionLogits(raw=raw, capped=soft_cap(raw, cap) if cap is not None else None)
