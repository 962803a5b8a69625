"""Causal self-attention: MHA, GQA and MQA with QK-norm, RoPE, soft-capping, sinks and sliding windows.

Order inside: project → QK-norm → rotate → (scale · q·kᵀ) → soft-cap → mask → softmax (+ sink) → · v;
with `qk_norm_placement='irope'` (Llama 4) the norm follows the rotation, on RoPE layers only. Projections
and sinks are declared in `harness.model.spec.attention`.
Two kernels: `F.scaled_dot_product_attention` whenever the arm allows (is_causal when no mask is needed),
and an eager path only when a soft-cap or sinks change the softmax, which SDPA cannot express.
"""

from __future__ import annotations

from typing import cast

import torch
import torch.nn.functional as F
from torch import nn

from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.cache import KVCache
from harness.model.component import Component, declared_linear
from harness.model.positions import Rotation, apply_rope
from harness.model.softcap import soft_cap
from harness.model.spec.parametrization import attention_scale
from harness.model.spec.params import Params


def allowed_keys(n_queries: int, n_keys: int, window: int | None, device: torch.device) -> torch.Tensor:
    """(T, S) bool: query i (at position S - T + i) may see key j iff j ≤ i and, with a window, i - j < window."""
    query_pos = torch.arange(n_keys - n_queries, n_keys, device=device)[:, None]  # (T, 1)
    key_pos = torch.arange(n_keys, device=device)[None, :]  # (1, S)
    allowed = key_pos <= query_pos
    if window is not None:
        allowed = allowed & (key_pos > query_pos - window)
    return allowed


class Attention(Component):
    """One layer's attention. Receives its norms (Identity when off) and reads its layer's window/RoPE use."""

    sinks: nn.Parameter | None  # registered in __init__, created by `declare` when declared

    def __init__(self, cfg: ModelConfig, layer: int, params: Params, q_norm: nn.Module, k_norm: nn.Module) -> None:
        super().__init__()
        self.layer = layer
        self.n_heads, self.n_kv_heads, self.head_dim = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.q_proj = declared_linear(params, "q_proj")
        self.k_proj = declared_linear(params, "k_proj")
        self.v_proj = declared_linear(params, "v_proj")
        self.o_proj = declared_linear(params, "o_proj")
        self.q_norm, self.k_norm = q_norm, k_norm
        self.qk_norm_full = cfg.qk_norm_scope == "full"
        self.norm_before_rope = registry.QK_NORM_PLACEMENTS[cfg.qk_norm_placement][0]
        self.register_parameter("sinks", None)
        self.declare(params)  # creates `sinks` when declared
        self.scale = attention_scale(cfg)  # attn_scale or 1/√head_dim; under μP ∝ 1/head_dim
        self.softcap = cfg.attn_softcap
        self.window = cfg.layer_window(layer)
        self.uses_rope = cfg.layer_uses_rope(layer)
        self.path = "eager" if self.softcap is not None or self.sinks is not None else "sdpa"
        self.capture_qk = False
        self.captured_q: torch.Tensor | None = None
        self.captured_k: torch.Tensor | None = None

    def captured(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(q, k) of the last forward, kept because `capture_qk` was on."""
        if self.captured_q is None or self.captured_k is None:
            raise RuntimeError(f"layer {self.layer}: no q and k captured; turn capture_qk on before the forward")
        return self.captured_q, self.captured_k

    def _heads(self, x: torch.Tensor, proj: nn.Linear, norm: nn.Module, n_heads: int) -> torch.Tensor:
        """(B, T, d) → (B, n_heads, T, D), normalized over all heads (full scope) or per head when the norm
        comes before RoPE."""
        batch, seq, _ = x.shape
        h = proj(x)  # (B, T, n·D)
        if self.norm_before_rope and self.qk_norm_full:
            h = norm(h)
        h = h.view(batch, seq, n_heads, self.head_dim)
        if self.norm_before_rope and not self.qk_norm_full:
            h = norm(h)
        return h.transpose(1, 2)

    def _norm_rotated(self, h: torch.Tensor, norm: nn.Module) -> torch.Tensor:
        """QK-norm after RoPE (iRoPE): h (B, n, T, D) normalized per head or over all heads."""
        if not self.qk_norm_full:
            return norm(h)
        batch, n_heads, seq, _ = h.shape
        flat = norm(h.transpose(1, 2).reshape(batch, seq, n_heads * self.head_dim))  # (B, T, n·D)
        return flat.view(batch, seq, n_heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, rotation: Rotation | None, cache: KVCache | None = None) -> torch.Tensor:
        """x (B, T, d) → (B, T, d); with a cache, x holds only the new tokens."""
        batch, seq, _ = x.shape
        q = self._heads(x, self.q_proj, self.q_norm, self.n_heads)  # (B, H, T, D)
        k = self._heads(x, self.k_proj, self.k_norm, self.n_kv_heads)  # (B, Hkv, T, D)
        v = self.v_proj(x).view(batch, seq, self.n_kv_heads, self.head_dim).transpose(1, 2)  # (B, Hkv, T, D)
        if self.uses_rope:
            rope = cast(Rotation, rotation)  # a RoPE layer is always handed its rotation (positions='rope')
            q, k = apply_rope(q, rope), apply_rope(k, rope)
        if not self.norm_before_rope:
            q, k = self._norm_rotated(q, self.q_norm), self._norm_rotated(k, self.k_norm)
        if self.capture_qk:
            self.captured_q, self.captured_k = q.detach(), k.detach()
        if cache is not None:
            k, v = cache.update(self.layer, k, v, self.window)  # (B, Hkv, S, D), S ≤ window - 1 + T when windowed
        out = self._eager(q, k, v) if self.path == "eager" else self._sdpa(q, k, v)  # (B, H, T, D)
        return self.o_proj(out.transpose(1, 2).reshape(batch, seq, self.n_heads * self.head_dim))

    def _sdpa(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        n_queries, n_keys = q.shape[2], k.shape[2]
        if self.window is None and n_queries == n_keys:
            mask, causal = None, True
        else:
            mask, causal = allowed_keys(n_queries, n_keys, self.window, q.device), False
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=causal, scale=self.scale, enable_gqa=self.n_kv_heads != self.n_heads
        )

    def _eager(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        batch, _, n_queries, _ = q.shape
        n_keys, groups = k.shape[2], self.n_heads // self.n_kv_heads
        # Query head h reads KV head h // groups: fold the group into the query axis instead of copying K/V.
        q = q.reshape(batch, self.n_kv_heads, groups * n_queries, self.head_dim)  # (B, Hkv, G·T, D)
        scores = (q @ k.transpose(-1, -2)).float() * self.scale  # (B, Hkv, G·T, S)
        scores = scores.view(batch, self.n_kv_heads, groups, n_queries, n_keys)  # (B, Hkv, G, T, S)
        if self.softcap is not None:
            scores = soft_cap(scores, self.softcap)  # before the mask, so masked logits stay -inf
        scores = scores.masked_fill(~allowed_keys(n_queries, n_keys, self.window, q.device), float("-inf"))
        if self.sinks is None:
            probs = scores.softmax(dim=-1)
        else:
            # gpt-oss: the sink is one more logit in the denominator, with no value behind it.
            sinks = self.sinks.float().view(1, self.n_kv_heads, groups, 1, 1).expand(batch, -1, -1, n_queries, 1)
            probs = torch.cat((scores, sinks), dim=-1).softmax(dim=-1)[..., :-1]
        probs = probs.to(v.dtype).view(batch, self.n_kv_heads, groups * n_queries, n_keys)
        return (probs @ v).view(batch, self.n_heads, n_queries, self.head_dim)  # (B, H, T, D)
