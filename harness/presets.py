"""Named model configs: `tiny` for tests, the seed's `stack-100m`, and proxy-scale families.

Each preset sets only the fields that define it and leaves derived ones (head_dim, d_ff, n_kv_heads) to
ModelConfig unless the family pins them, so an override such as d_model=512 re-derives them instead of
keeping stale values. The proxies are small enough to train on a CPU or one GPU but keep every
architecture switch of their family, so an ablation against them changes what the real model would.
"""

from __future__ import annotations

from typing import Any, Callable

from harness.config.base import check_choice
from harness.config.model import ModelConfig, check_kept_kv_heads

# The proxies share one vocabulary and context so that their differences are architectural only.
PROXY_VOCAB = 8192
PROXY_SEQ_LEN = 256


def _build(fields: dict[str, Any], overrides: dict[str, Any]) -> ModelConfig:
    check_kept_kv_heads(fields, overrides)
    return ModelConfig.from_dict({**fields, **overrides})


def tiny(**overrides: Any) -> ModelConfig:
    """A 164k-parameter Llama-style model for CPU tests and the quick start."""
    return _build(
        dict(
            vocab_size=1024, d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, mlp="swiglu", norm="rmsnorm",
            norm_position="pre", positions="rope", qk_norm="none", max_seq_len=128, tie_embeddings=True,
        ),
        overrides,
    )


def stack_100m(**overrides: Any) -> ModelConfig:
    """The seed's capstone: 30 blocks of its ModernTransformerBlock (2,753,152 parameters each)."""
    return _build(
        dict(
            vocab_size=32768, d_model=512, n_layers=30, n_heads=8, n_kv_heads=2, head_dim=64,
            mlp="swiglu", d_ff=1365,  # the seed's 8/3·512 rounded down, not up to a multiple
            norm="rmsnorm", norm_position="pre", qk_norm="rmsnorm", qk_norm_scope="head",
            # Every 4th layer position-free, as in Llama 4's iRoPE: the NoPE layers attend by content
            # over the whole context while 3 of 4 layers keep RoPE's local ordering.
            positions="rope", nope_every=4,
            max_seq_len=2048, bias="none", tie_embeddings=True,
        ),
        overrides,
    )


def gpt2(**overrides: Any) -> ModelConfig:
    """GPT-2: pre-LayerNorm with biases, learned positions, tanh-GELU MLP, MHA, tied embeddings."""
    return _build(
        dict(
            vocab_size=PROXY_VOCAB, d_model=384, n_layers=6, n_heads=6, mlp="gelu", gelu_approximate="tanh",
            norm="layernorm", norm_eps=1e-5, norm_position="pre", positions="learned",
            max_seq_len=PROXY_SEQ_LEN, bias="all", tie_embeddings=True,
        ),
        overrides,
    )


def llama3(**overrides: Any) -> ModelConfig:
    """Llama 3: pre-RMSNorm, SwiGLU, GQA, RoPE θ=500000, untied, no biases (the benchmark's shape)."""
    return _build(
        dict(
            vocab_size=PROXY_VOCAB, d_model=256, n_layers=4, n_heads=8, n_kv_heads=2, mlp="swiglu",
            norm="rmsnorm", norm_eps=1e-5, norm_position="pre", positions="rope", rope_theta=500000.0,
            max_seq_len=PROXY_SEQ_LEN, bias="none", tie_embeddings=False,
        ),
        overrides,
    )


def qwen3(**overrides: Any) -> ModelConfig:
    """Qwen3: Llama's recipe plus per-head QK RMSNorm, RoPE θ=1e6 and an explicit head_dim wider than d/H."""
    return _build(
        dict(
            vocab_size=PROXY_VOCAB, d_model=384, n_layers=6, n_heads=8, n_kv_heads=4, head_dim=64,
            mlp="swiglu", d_ff=1024, norm="rmsnorm", norm_eps=1e-6, norm_position="pre",
            qk_norm="rmsnorm", qk_norm_scope="head", positions="rope", rope_theta=1e6,
            max_seq_len=PROXY_SEQ_LEN, bias="none", tie_embeddings=True,
        ),
        overrides,
    )


def gemma2(**overrides: Any) -> ModelConfig:
    """Gemma 2: sandwich (1+w) RMSNorm, scaled embeddings, tanh-GeGLU, soft-caps 50/30, query_pre_attn_scalar
    scaling, alternating sliding-window/global layers, explicit head_dim, tied."""
    head_dim = 64
    query_pre_attn_scalar = 64  # Gemma 2 2B/9B use head_dim; 27B uses d_model / n_heads
    return _build(
        dict(
            vocab_size=PROXY_VOCAB, d_model=320, n_layers=6, n_heads=4, n_kv_heads=2, head_dim=head_dim,
            mlp="geglu", gelu_approximate="tanh", d_ff=1280, norm="rmsnorm", norm_eps=1e-6,
            norm_position="sandwich", norm_unit_offset=True, scale_embeddings=True,
            attn_softcap=50.0, final_softcap=30.0, attn_scale=query_pre_attn_scalar**-0.5,
            # A window a quarter of the context, so local and global layers differ at proxy length.
            sliding_window=PROXY_SEQ_LEN // 4, global_every=2,
            positions="rope", max_seq_len=PROXY_SEQ_LEN, bias="none", tie_embeddings=True,
        ),
        overrides,
    )


def olmo2(**overrides: Any) -> ModelConfig:
    """OLMo 2: reordered norm (RMSNorm on sublayer outputs), full-width QK RMSNorm, SwiGLU, MHA, untied."""
    return _build(
        dict(
            vocab_size=PROXY_VOCAB, d_model=384, n_layers=6, n_heads=6, mlp="swiglu", d_ff=1024,
            norm="rmsnorm", norm_eps=1e-6, norm_position="reordered", qk_norm="rmsnorm", qk_norm_scope="full",
            positions="rope", rope_theta=500000.0, max_seq_len=PROXY_SEQ_LEN, bias="none", tie_embeddings=False,
        ),
        overrides,
    )


PRESETS: dict[str, Callable[..., ModelConfig]] = {
    "tiny": tiny,
    "stack-100m": stack_100m,
    "gpt2": gpt2,
    "llama3": llama3,
    "qwen3": qwen3,
    "gemma2": gemma2,
    "olmo2": olmo2,
}


def from_name(name: str, **overrides: Any) -> ModelConfig:
    """The preset `name` with `overrides` applied before derivation; unknown names list the valid ones."""
    check_choice("presets", "name", name, PRESETS)
    return PRESETS[name](**overrides)
