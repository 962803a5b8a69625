"""Analytic size and cost of a `ModelConfig`: parameters, FLOPs per token, KV-cache bytes, iso-parameter solving.

Pure Python, no torch: a sweep sizes and matches its arms before building anything. The counts come from the
components' own torch-free declarations (`harness.model.spec`), the ones the modules build from, so
`params(cfg)` equals `sum(p.numel())` of `build_model(cfg)` by construction.
The formulas and their conventions are written out in docs/calc.md.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

from harness.config.base import check, check_choice, check_int
from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.spec import decoder as spec
from harness.model.spec.attention import score_flops_per_token
from harness.model.spec.params import Params, count, matmul_weights

BYTES_PER_ELEMENT = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8": 1}

SOLVABLE_FIELDS = ("d_ff", "d_model")


def _layers(cfg: ModelConfig) -> tuple[Params, ...]:
    """Each block's declaration, built once per config and registry state (a sweep sizes the same arms many
    times; the registry entries are part of the key, so a value registered later is never served stale)."""
    entries = tuple(table[getattr(cfg, field)] for field, table in registry.tables().items())
    return _layers_of(cfg, entries)


@functools.lru_cache(maxsize=4096)
def _layers_of(cfg: ModelConfig, entries: tuple) -> tuple[Params, ...]:
    return tuple(spec.block(cfg, layer) for layer in range(cfg.n_layers))


def layer_params(cfg: ModelConfig, layer: int) -> int:
    """Parameters of 0-based block `layer` (attention, MLP sublayer and the block's norms)."""
    check(0 <= layer < cfg.n_layers, "calc", "layer", layer, f"must be in 0..{cfg.n_layers - 1}")
    return count(_layers(cfg)[layer])


def per_layer_params(cfg: ModelConfig) -> list[int]:
    """`layer_params` of every block, in order (layers differ, e.g. iRoPE's NoPE layers have no QK-norm)."""
    return [count(block) for block in _layers(cfg)]


def embedding_params(cfg: ModelConfig) -> int:
    """Token embedding, learned position embedding and an untied lm_head: the vocabulary/position tables."""
    return count(spec.embeddings(cfg)) + count(spec.positions(cfg))


def final_norm_params(cfg: ModelConfig) -> int:
    """Post-norm blocks already end in a norm, so only the other placements have a final one."""
    return count(spec.final_norm(cfg))


def non_embedding_params(cfg: ModelConfig) -> int:
    """Every parameter except the token embedding, learned positions and an untied lm_head."""
    return sum(per_layer_params(cfg)) + final_norm_params(cfg)


def params(cfg: ModelConfig) -> int:
    """Total parameter count; equals `sum(p.numel() for p in build_model(cfg).parameters())`."""
    return embedding_params(cfg) + non_embedding_params(cfg)


def matmul_params_per_token(cfg: ModelConfig) -> int:
    """Weights one token is multiplied by, as the components declare them: attention projections, the
    router and its top-k experts (or the dense MLP), and the output projection (tied or not, the logits are
    a V×d matmul). Embedding lookups, norms, biases and sinks are not matmuls."""
    return sum(matmul_weights(block) for block in _layers(cfg)) + matmul_weights(spec.embeddings(cfg))


def attention_flops_per_token(cfg: ModelConfig, seq_len: int, windowed: bool = True) -> int:
    """QKᵀ and A·V, forward and backward, summed over layers: 12·H·head_dim·context per layer. With
    `windowed` (the ideal count) context is seq_len capped by the layer's sliding window; without, it is
    seq_len on every layer, which is what our kernels compute (a window only masks the full T×T scores).
    No causal halving (the PaLM convention)."""
    return sum(score_flops_per_token(cfg, layer, seq_len, windowed) for layer in range(cfg.n_layers))


def _seq_len(cfg: ModelConfig, seq_len: int | None) -> int:
    seq_len = cfg.max_seq_len if seq_len is None else seq_len
    check_int("calc", "seq_len", seq_len)
    return seq_len


def flops_per_token(cfg: ModelConfig, seq_len: int | None = None) -> int:
    """Training FLOPs per token (forward + backward): 6·matmul params + the ideal windowed attention term at
    `seq_len` (default: the config's max_seq_len). This is the figure stored with runs and matched by
    `iso_flops`; `kernel_flops_per_token` is what the kernels spend on windowed layers."""
    seq_len = _seq_len(cfg, seq_len)
    return 6 * matmul_params_per_token(cfg) + attention_flops_per_token(cfg, seq_len)


def kernel_flops_per_token(cfg: ModelConfig, seq_len: int | None = None) -> int:
    """As `flops_per_token`, with every layer's scores computed over the full context, as SDPA with a window
    mask and the eager path do. Equal to `flops_per_token` when no window is shorter than seq_len."""
    seq_len = _seq_len(cfg, seq_len)
    return 6 * matmul_params_per_token(cfg) + attention_flops_per_token(cfg, seq_len, windowed=False)


def kv_cache_bytes_per_token(cfg: ModelConfig, dtype: str = "bf16") -> int:
    """Bytes the KV cache grows by per generated token while the context is shorter than every window: K
    and V of every layer. Past its window a sliding-window layer stops growing (see `kv_cache_bytes`)."""
    check_choice("calc", "kv_dtype", dtype, BYTES_PER_ELEMENT)
    return 2 * cfg.n_layers * cfg.n_kv_heads * cfg.head_dim * BYTES_PER_ELEMENT[dtype]


def kv_cache_bytes(cfg: ModelConfig, seq_len: int | None = None, dtype: str = "bf16") -> int:
    """Bytes of a KV cache holding a `seq_len` context: a global layer keeps every position, a
    sliding-window layer only the last window - 1 (what `harness.model.KVCache` stores)."""
    seq_len = _seq_len(cfg, seq_len)
    per_position = kv_cache_bytes_per_token(cfg, dtype) // cfg.n_layers
    kept = (min(seq_len, (cfg.layer_window(layer) or seq_len + 1) - 1) for layer in range(cfg.n_layers))
    return per_position * sum(kept)


def summary(cfg: ModelConfig, seq_len: int | None = None, kv_dtype: str = "bf16") -> dict[str, Any]:
    """All of the calculator's figures for one config, as plain JSON-able values."""
    seq_len = _seq_len(cfg, seq_len)
    return {
        "params": params(cfg),
        "non_embedding_params": non_embedding_params(cfg),
        "per_layer_params": per_layer_params(cfg),
        "flops_per_token": flops_per_token(cfg, seq_len),
        "kernel_flops_per_token": kernel_flops_per_token(cfg, seq_len),
        "kv_cache_bytes_per_token": kv_cache_bytes_per_token(cfg, kv_dtype),
        "kv_cache_bytes": kv_cache_bytes(cfg, seq_len, kv_dtype),
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


def _iso(cfg: ModelConfig, target: tuple[str, int], measure: Callable[[ModelConfig], int], solve: str, multiple_of: int,
         who: str) -> tuple[ModelConfig, int]:
    """Resize `cfg` along `solve` so `measure(cfg)` (non-decreasing in the solved field) is closest to the
    target, given as (argument name, value) for the error message."""
    check_choice(who, "solve", solve, SOLVABLE_FIELDS)
    check_int(who, *target)
    wanted = target[1]
    check_int(who, "multiple_of", multiple_of)
    step = multiple_of if solve == "d_ff" else math.lcm(_width_step(cfg), multiple_of)

    def resize(k: int) -> ModelConfig:
        return cfg.replace(d_ff=k * step) if solve == "d_ff" else _with_width(cfg, k * step)

    solved = resize(_closest_multiple(lambda k: measure(resize(k)), wanted))
    return solved, measure(solved) - wanted


def iso_param(cfg: ModelConfig, target_params: int, solve: str = "d_ff",
              multiple_of: int = 1) -> tuple[ModelConfig, int]:
    """Resize `cfg` so its total parameter count is as close to `target_params` as the grid allows.

    solve='d_ff' changes only the MLP hidden size; solve='d_model' changes the width (see `_with_width`).
    The solved field is a multiple of `multiple_of` (and, for d_model, of the step keeping heads whole).
    Returns (new config, residual = params(new) - target_params).
    """
    return _iso(cfg, ("target_params", target_params), params, solve, multiple_of, "iso_param")


def iso_flops(cfg: ModelConfig, target_flops: int, seq_len: int, solve: str = "d_ff",
              multiple_of: int = 1) -> tuple[ModelConfig, int]:
    """As `iso_param`, matching training FLOPs per token at `seq_len` instead of parameters.
    Returns (new config, residual = flops_per_token(new) - target_flops)."""
    return _iso(cfg, ("target_flops", target_flops), lambda c: flops_per_token(c, seq_len), solve, multiple_of,
                "iso_flops")
