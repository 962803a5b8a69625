"""Analytic size and cost of a `ModelConfig`: parameters, FLOPs per token, KV-cache bytes, iso-parameter solving.

Pure Python, no torch: a sweep sizes and matches its arms before building anything. The counts follow the
parameter contract of docs/internals.md, so `params(cfg)` equals `sum(p.numel())` of `build_model(cfg)`.
The formulas and their conventions are written out in docs/calc.md.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from harness.config.base import check, check_choice, check_int
from harness.config.model import ModelConfig

BYTES_PER_ELEMENT = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}

# How many d_model-wide norms each block holds, by placement (see the norm slots in docs/internals.md).
NORMS_PER_BLOCK = {"pre": 2, "post": 2, "sandwich": 4, "reordered": 2, "parallel": 1}

SOLVABLE_FIELDS = ("d_ff", "d_model")


def _linear(fan_in: int, fan_out: int, has_bias: bool) -> int:
    return fan_in * fan_out + (fan_out if has_bias else 0)


def _norm(kind: str, width: int, bias: str) -> int:
    """γ over `width` channels, plus β for a LayerNorm when the model carries biases everywhere."""
    has_beta = kind == "layernorm" and bias == "all"
    return width * (2 if has_beta else 1)


def attention_params(cfg: ModelConfig) -> int:
    """q/k/v/o projections with their biases, the q/k norms and the per-head sink logits of one layer."""
    q_width, kv_width = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    qkv_bias = cfg.bias in ("qkv", "all")
    count = (
        _linear(cfg.d_model, q_width, qkv_bias)
        + 2 * _linear(cfg.d_model, kv_width, qkv_bias)
        + _linear(q_width, cfg.d_model, cfg.bias == "all")
    )
    if cfg.qk_norm != "none":
        per_head = cfg.qk_norm_scope == "head"
        count += _norm(cfg.qk_norm, cfg.head_dim if per_head else q_width, cfg.bias)
        count += _norm(cfg.qk_norm, cfg.head_dim if per_head else kv_width, cfg.bias)
    if cfg.attn_sinks:
        count += cfg.n_heads
    return count


def mlp_params(cfg: ModelConfig, has_bias: bool) -> int:
    """One MLP: up (and gate for a GLU) and down projections."""
    n_input_projections = 2 if cfg.is_glu else 1
    return n_input_projections * _linear(cfg.d_model, cfg.d_ff, has_bias) + _linear(cfg.d_ff, cfg.d_model, has_bias)


def ffn_params(cfg: ModelConfig) -> int:
    """The MLP sublayer: a dense MLP (biases only with 'all'), or a router plus n_experts MLPs, all bias-free."""
    if cfg.is_moe:
        return cfg.n_experts * cfg.d_model + cfg.n_experts * mlp_params(cfg, has_bias=False)
    return mlp_params(cfg, has_bias=cfg.bias == "all")


def layer_params(cfg: ModelConfig, layer: int) -> int:
    """Parameters of 0-based block `layer` (attention, MLP sublayer and the block's norms)."""
    check(0 <= layer < cfg.n_layers, "calc", "layer", layer, f"must be in 0..{cfg.n_layers - 1}")
    block_norms = NORMS_PER_BLOCK[cfg.norm_position] * _norm(cfg.norm, cfg.d_model, cfg.bias)
    return attention_params(cfg) + ffn_params(cfg) + block_norms


def per_layer_params(cfg: ModelConfig) -> list[int]:
    """`layer_params` of every block, in order (a list so layers that differ can say so)."""
    return [layer_params(cfg, layer) for layer in range(cfg.n_layers)]


def embedding_params(cfg: ModelConfig) -> int:
    """Token embedding, learned position embedding and an untied lm_head: the vocabulary/position tables."""
    count = cfg.vocab_size * cfg.d_model
    if cfg.positions == "learned":
        count += cfg.max_seq_len * cfg.d_model
    if not cfg.tie_embeddings:
        count += cfg.vocab_size * cfg.d_model
    return count


def final_norm_params(cfg: ModelConfig) -> int:
    """Post-norm blocks already end in a norm, so only the other placements have a final one."""
    return 0 if cfg.norm_position == "post" else _norm(cfg.norm, cfg.d_model, cfg.bias)


def non_embedding_params(cfg: ModelConfig) -> int:
    """Every parameter except the token embedding, learned positions and an untied lm_head."""
    return sum(per_layer_params(cfg)) + final_norm_params(cfg)


def params(cfg: ModelConfig) -> int:
    """Total parameter count; equals `sum(p.numel() for p in build_model(cfg).parameters())`."""
    return embedding_params(cfg) + non_embedding_params(cfg)


def matmul_params_per_token(cfg: ModelConfig) -> int:
    """Weights one token is multiplied by: attention projections, the router and its top-k experts (or the
    dense MLP), and the output projection (tied or not, the logits are a V×d matmul). Embedding lookups,
    norms, biases and sinks are not matmuls."""
    q_width, kv_width = cfg.n_heads * cfg.head_dim, cfg.n_kv_heads * cfg.head_dim
    attention = 2 * cfg.d_model * q_width + 2 * cfg.d_model * kv_width
    mlp = (3 if cfg.is_glu else 2) * cfg.d_model * cfg.d_ff
    ffn = cfg.n_experts * cfg.d_model + cfg.moe_top_k * mlp if cfg.is_moe else mlp
    return cfg.n_layers * (attention + ffn) + cfg.vocab_size * cfg.d_model


def attention_flops_per_token(cfg: ModelConfig, seq_len: int) -> int:
    """QKᵀ and A·V, forward and backward: 12·H·head_dim·context per layer, where context is seq_len capped
    by the layer's sliding window. No causal halving (the PaLM convention): each token is charged the whole
    context, as a kernel that computes the full score matrix would spend."""
    return sum(
        12 * cfg.n_heads * cfg.head_dim * min(seq_len, cfg.layer_window(layer) or seq_len)
        for layer in range(cfg.n_layers)
    )


def flops_per_token(cfg: ModelConfig, seq_len: int | None = None) -> int:
    """Training FLOPs per token (forward + backward): 6·matmul params + attention term at `seq_len`
    (default: the config's max_seq_len)."""
    seq_len = cfg.max_seq_len if seq_len is None else seq_len
    check_int("calc", "seq_len", seq_len)
    return 6 * matmul_params_per_token(cfg) + attention_flops_per_token(cfg, seq_len)


def kv_cache_bytes_per_token(cfg: ModelConfig, dtype: str = "bf16") -> int:
    """Bytes the KV cache grows by per generated token: K and V of every layer (sliding-window layers
    included: a cache that keeps the whole context stores them too)."""
    check_choice("calc", "kv_dtype", dtype, BYTES_PER_ELEMENT)
    return 2 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim * BYTES_PER_ELEMENT[dtype]


def summary(cfg: ModelConfig, seq_len: int | None = None, kv_dtype: str = "bf16") -> dict[str, Any]:
    """All of the calculator's figures for one config, as plain JSON-able values."""
    seq_len = cfg.max_seq_len if seq_len is None else seq_len
    return {
        "params": params(cfg),
        "non_embedding_params": non_embedding_params(cfg),
        "per_layer_params": per_layer_params(cfg),
        "flops_per_token": flops_per_token(cfg, seq_len),
        "kv_cache_bytes_per_token": kv_cache_bytes_per_token(cfg, kv_dtype),
        "seq_len": seq_len,
        "kv_dtype": kv_dtype,
    }


def _with_width(cfg: ModelConfig, d_model: int) -> ModelConfig:
    """`cfg` at another width: head_dim follows d_model when it was d_model/n_heads (else it was set
    explicitly and stays), and d_ff keeps its ratio to d_model."""
    head_dim = d_model // cfg.n_heads if cfg.head_dim * cfg.n_heads == cfg.d_model else cfg.head_dim
    d_ff = max(1, round(cfg.d_ff * d_model / cfg.d_model))
    return cfg.replace(d_model=d_model, head_dim=head_dim, d_ff=d_ff)


def _width_step(cfg: ModelConfig) -> int:
    """Smallest d_model increment that keeps head_dim an integer (and even, for RoPE)."""
    if cfg.head_dim * cfg.n_heads != cfg.d_model:
        return 2 if cfg.positions == "rope" else 1
    return cfg.n_heads * (2 if cfg.positions == "rope" else 1)


def _closest_multiple(count: Callable[[int], int], target: int) -> int:
    """The k ≥ 1 whose `count(k)` (non-decreasing in k) is closest to `target`; ties go to the smaller k."""
    high = 1
    while count(high) < target:
        high *= 2
    low = high // 2 + 1 if high > 1 else 1
    while low < high:  # smallest k with count(k) ≥ target
        mid = (low + high) // 2
        if count(mid) >= target:
            high = mid
        else:
            low = mid + 1
    if high > 1 and target - count(high - 1) <= count(high) - target:
        return high - 1
    return high


def _iso(cfg: ModelConfig, target: tuple[str, int], measure: Callable[[ModelConfig], int], solve: str, multiple_of: int, who: str) -> tuple[ModelConfig, int]:
    """Resize `cfg` along `solve` so `measure(cfg)` (non-decreasing in the solved field) is closest to the
    target, given as (argument name, value) for the error message."""
    check_choice(who, "solve", solve, SOLVABLE_FIELDS)
    check_int(who, *target)
    target = target[1]
    check_int(who, "multiple_of", multiple_of)
    step = multiple_of if solve == "d_ff" else math.lcm(_width_step(cfg), multiple_of)

    def resize(k: int) -> ModelConfig:
        return cfg.replace(d_ff=k * step) if solve == "d_ff" else _with_width(cfg, k * step)

    solved = resize(_closest_multiple(lambda k: measure(resize(k)), target))
    return solved, measure(solved) - target


def iso_param(cfg: ModelConfig, target_params: int, solve: str = "d_ff", multiple_of: int = 1) -> tuple[ModelConfig, int]:
    """Resize `cfg` so its total parameter count is as close to `target_params` as the grid allows.

    solve='d_ff' changes only the MLP hidden size; solve='d_model' changes the width (see `_with_width`).
    The solved field is a multiple of `multiple_of` (and, for d_model, of the step keeping heads whole).
    Returns (new config, residual = params(new) - target_params).
    """
    return _iso(cfg, ("target_params", target_params), params, solve, multiple_of, "iso_param")


def iso_flops(cfg: ModelConfig, target_flops: int, seq_len: int, solve: str = "d_ff", multiple_of: int = 1) -> tuple[ModelConfig, int]:
    """As `iso_param`, matching training FLOPs per token at `seq_len` instead of parameters.
    Returns (new config, residual = flops_per_token(new) - target_flops)."""
    return _iso(cfg, ("target_flops", target_flops), lambda c: flops_per_token(c, seq_len), solve, multiple_of, "iso_flops")
