"""`ModelConfig`: every architecture switch of the decoder, as one flat frozen dataclass of plain values.

Users write these field names in ablation grids, so they are the product's vocabulary: keep them stable.
Derived fields (`n_kv_heads`, `head_dim`, `d_ff`) are resolved at construction, so a config that spells
out the defaults and one that leaves them to derivation are equal and hash the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from harness.config.base import ConfigBase, check, check_choice, check_int, check_positive
from harness.model import registry

# The Literal types document the values for readers and type checkers; the valid values are the registry's
# (harness/model/registry.py), and a test keeps the two equal.
Mlp = Literal["relu", "gelu", "swiglu", "geglu"]
Norm = Literal["layernorm", "rmsnorm", "rmsnorm_noweight"]
NormPosition = Literal["pre", "post", "sandwich", "reordered", "parallel", "parallel_two_norms"]
QKNorm = Literal["none", "layernorm", "rmsnorm", "rmsnorm_noweight"]
QKNormScope = Literal["head", "full"]
QKNormPlacement = Literal["pre_rope", "irope"]
Positions = Literal["rope", "nope", "learned"]
RopeType = Literal["default", "llama3"]
Bias = Literal["none", "qkv", "all"]
GeluApproximate = Literal["none", "tanh"]
MoeAuxLoss = Literal["assignment_share", "switch"]
MoeTopkNorm = Literal["auto", "renormalize", "none"]

# Llama 3 RoPE fields and their defaults (Llama 3.1's values); only rope_type='llama3' reads them.
LLAMA3_ROPE_DEFAULTS = {
    "rope_scaling_factor": 8.0,
    "rope_low_freq_factor": 1.0,
    "rope_high_freq_factor": 4.0,
    "rope_original_max_seq_len": 8192,
}


def derived_d_ff(d_model: int, mlp: str, multiple_of: int) -> int:
    """4·d for a dense MLP; 8/3·d rounded up to `multiple_of` for a GLU (iso-parameter with 4·d)."""
    if registry.MLPS[mlp].gated:
        return multiple_of * math.ceil(8 * d_model / 3 / multiple_of)
    return 4 * d_model


def check_kept_kv_heads(current: dict, changes: dict) -> None:
    """`changes` set n_heads on a config (`current`, a dict of fields) whose explicit n_kv_heads stays: name
    n_heads, the field the caller set (validation alone cannot tell which of the two was set, and blamed
    n_kv_heads)."""
    n_heads, n_kv_heads = changes.get("n_heads"), current.get("n_kv_heads")
    if "n_kv_heads" in changes or n_kv_heads is None or type(n_heads) is not int or n_heads < 1:
        return  # n_kv_heads follows n_heads, or the values are checked (and named) by __post_init__
    allowed = ", ".join(str(k) for k in range(1, n_heads + 1) if n_heads % k == 0)
    check(
        n_heads % n_kv_heads == 0,
        "ModelConfig", "n_heads", n_heads,
        f"it must be a multiple of n_kv_heads={n_kv_heads}, which the config keeps; set n_kv_heads as well "
        f"(n_heads={n_heads} allows n_kv_heads {allowed})",
    )


@dataclass(frozen=True)
class ModelConfig(ConfigBase):
    """One decoder-only transformer. See README's switch table for what each field means."""

    vocab_size: int = 4096
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int | None = None  # None: = n_heads (MHA); 1 is MQA; in between is GQA
    head_dim: int | None = None  # None: d_model // n_heads
    d_ff: int | None = None  # None: derived by `derived_d_ff`
    mlp: Mlp = "swiglu"
    n_experts: int = 1  # > 1 turns the MLP into a top-k routed mixture of experts of `mlp` type
    moe_top_k: int = 2
    norm: Norm = "rmsnorm"
    norm_eps: float = 1e-5
    norm_position: NormPosition = "pre"
    qk_norm: QKNorm = "none"
    attn_softcap: float | None = None  # c·tanh(logit/c) on attention logits, before the causal mask
    final_softcap: float | None = None  # the same on the output logits
    attn_sinks: bool = False  # learned per-head sink logit in the softmax denominator (gpt-oss)
    positions: Positions = "rope"
    rope_theta: float = 10000.0
    rope_local_theta: float | None = None  # RoPE base of sliding-window layers, unscaled (Gemma 3); None: rope_theta
    nope_every: int = 0  # k > 0: every k-th layer (k, 2k, ...) skips RoPE (iRoPE); 0: none
    max_seq_len: int = 256
    bias: Bias = "none"
    tie_embeddings: bool = True
    init_std: float = 0.02
    scaled_init: bool = True  # output projections get std / sqrt(2·n_layers) (GPT-2)
    # Switches that Hugging Face families need; ordinary fields, so they can be ablated too.
    ffn_multiple_of: int = 64  # GLU hidden size rounding when d_ff is derived
    qk_norm_scope: QKNormScope = "head"  # head: one γ of head_dim shared by heads; full: over all heads (OLMo 2)
    norm_unit_offset: bool = False  # norm weight is stored as w and applied as (1 + w) (Gemma)
    scale_embeddings: bool = False  # multiply token embeddings by sqrt(d_model) (Gemma)
    attn_scale: float | None = None  # None: 1/sqrt(head_dim); Gemma 2: query_pre_attn_scalar ** -0.5
    gelu_approximate: GeluApproximate = "none"  # 'tanh' for GPT-2's gelu_new and Gemma's gelu_pytorch_tanh
    sliding_window: int | None = None  # local attention window (tokens) on non-global layers
    global_every: int = 0  # with sliding_window: every k-th layer attends globally; 0: all layers local
    qk_norm_placement: QKNormPlacement = "pre_rope"  # irope: after RoPE, on RoPE layers only (Llama 4)
    rope_type: RopeType = "default"  # llama3: Llama 3.1's frequency rescaling with the rope_* fields below
    rope_scaling_factor: float = 8.0
    rope_low_freq_factor: float = 1.0
    rope_high_freq_factor: float = 4.0
    rope_original_max_seq_len: int = 8192
    moe_aux_loss: MoeAuxLoss = "assignment_share"  # switch: Switch/Mixtral's f_e (k times ours with top-k)
    moe_topk_norm: MoeTopkNorm = "auto"  # auto: renormalize the top-k weights iff k ≥ 2
    moe_capacity_factor: float | None = None  # slots per expert = ceil(factor·N·k/E); overflow is dropped

    def __post_init__(self) -> None:
        self.store_floats()
        name = type(self).__name__
        int_fields = ("vocab_size", "d_model", "n_layers", "n_heads", "max_seq_len", "n_experts", "ffn_multiple_of")
        for field in (*int_fields, "rope_original_max_seq_len"):
            check_int(name, field, getattr(self, field))
        for field in ("n_kv_heads", "head_dim", "d_ff", "sliding_window"):
            check_int(name, field, getattr(self, field), allow_none=True)
        for field in ("moe_top_k",):
            check_int(name, field, getattr(self, field))
        for field in ("nope_every", "global_every"):
            check_int(name, field, getattr(self, field), minimum=0)
        for field, table in registry.tables().items():
            check_choice(name, field, getattr(self, field), tuple(table))
        optional_positive = ("attn_softcap", "final_softcap", "attn_scale", "moe_capacity_factor")
        for field in optional_positive:
            check_positive(name, field, getattr(self, field), allow_none=True)
        positive = ("norm_eps", "rope_theta", "init_std", "rope_scaling_factor", "rope_low_freq_factor",
                    "rope_high_freq_factor")
        for field in positive:
            check_positive(name, field, getattr(self, field))
        for field in (*optional_positive, *positive):
            value = getattr(self, field)
            check(value is None or math.isfinite(value), name, field, value, "must be finite")
        for field in ("attn_sinks", "tie_embeddings", "scaled_init", "norm_unit_offset", "scale_embeddings"):
            check(isinstance(getattr(self, field), bool), name, field, getattr(self, field), "must be true or false")

        if self.n_kv_heads is None:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        check(
            self.n_heads % self.n_kv_heads == 0,
            name, "n_kv_heads", self.n_kv_heads,
            f"n_heads={self.n_heads} must be divisible by n_kv_heads (valid: "
            f"{', '.join(str(k) for k in range(1, self.n_heads + 1) if self.n_heads % k == 0)})",
        )
        head_dim_origin = ""
        if self.head_dim is None:
            check(
                self.d_model % self.n_heads == 0,
                name, "n_heads", self.n_heads,
                f"d_model={self.d_model} must be divisible by n_heads, or set head_dim explicitly",
            )
            object.__setattr__(self, "head_dim", self.d_model // self.n_heads)
            head_dim_origin = f" (derived: d_model/n_heads = {self.d_model}/{self.n_heads})"
        if self.positions == "rope":
            check(
                self.head_dim % 2 == 0,
                name, "head_dim", self.head_dim,
                f"RoPE rotates channel pairs, so head_dim{head_dim_origin} must be even "
                "(or use positions='nope'/'learned')",
            )
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", derived_d_ff(self.d_model, self.mlp, self.ffn_multiple_of))
        check(
            self.moe_top_k <= self.n_experts or self.n_experts == 1,
            name, "moe_top_k", self.moe_top_k, f"must be ≤ n_experts={self.n_experts}",
        )
        check(
            self.nope_every == 0 or self.positions == "rope",
            name, "nope_every", self.nope_every, "interleaved NoPE layers only make sense with positions='rope'",
        )
        check(
            self.global_every == 0 or self.sliding_window is not None,
            name, "global_every", self.global_every, "needs sliding_window to be set",
        )
        check(
            self.qk_norm != "none" or self.qk_norm_scope == "head",
            name, "qk_norm_scope", self.qk_norm_scope, "only applies when qk_norm is 'rmsnorm' or 'layernorm'",
        )
        self._check_rope_and_moe(name)

    def _check_rope_and_moe(self, name: str) -> None:
        """Fields that only mean something beside another switch must not be set without it."""
        check(
            self.qk_norm_placement == "pre_rope" or (self.qk_norm != "none" and self.positions == "rope"),
            name, "qk_norm_placement", self.qk_norm_placement,
            "'irope' normalizes q and k after RoPE on RoPE layers: it needs qk_norm set and positions='rope'",
        )
        check(
            self.rope_type == "default" or self.positions == "rope",
            name, "rope_type", self.rope_type, "RoPE scaling needs positions='rope'",
        )
        for field, default in LLAMA3_ROPE_DEFAULTS.items():
            check(
                self.rope_type == "llama3" or getattr(self, field) == default,
                name, field, getattr(self, field), "only applies with rope_type='llama3'",
            )
        check(
            self.rope_high_freq_factor > self.rope_low_freq_factor,
            name, "rope_high_freq_factor", self.rope_high_freq_factor,
            f"must exceed rope_low_freq_factor={self.rope_low_freq_factor} (Llama 3 blends between the two)",
        )
        local_theta = self.rope_local_theta
        check(
            local_theta is None
            or (type(local_theta) is float and 0 < local_theta < math.inf and self.positions == "rope"
                and self.sliding_window is not None),
            name, "rope_local_theta", local_theta,
            "the RoPE base of sliding-window layers must be a positive finite number or None, and needs "
            "positions='rope' and sliding_window set",
        )
        moe_fields = {"moe_aux_loss": "assignment_share", "moe_topk_norm": "auto", "moe_capacity_factor": None}
        for field, default in moe_fields.items():
            check(
                self.is_moe or getattr(self, field) == default,
                name, field, getattr(self, field), "only applies to a mixture of experts (n_experts > 1)",
            )

    def replace(self, **changes):
        """A copy with some fields changed. A derived field still at its derived value (n_kv_heads = n_heads,
        head_dim = d_model / n_heads, d_ff from d_model) is derived again from the new values, so
        `replace(d_model=256)` resizes the heads and the MLP as a fresh config would; an explicit value stays."""
        current = self.to_dict()
        for field, derived in self._derivations().items():
            if field not in changes and current[field] == derived:
                current[field] = None
        check_kept_kv_heads(current, changes)
        return type(self).from_dict({**current, **changes})

    def _derivations(self) -> dict[str, int | None]:
        """The value each derivable field would take if it were left to derivation."""
        return {
            "n_kv_heads": self.n_heads,
            "head_dim": self.d_model // self.n_heads if self.d_model % self.n_heads == 0 else None,
            "d_ff": derived_d_ff(self.d_model, self.mlp, self.ffn_multiple_of),
        }

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 1

    @property
    def is_glu(self) -> bool:
        return registry.MLPS[self.mlp].gated

    def layer_uses_rope(self, layer: int) -> bool:
        """Whether 0-based `layer` rotates q/k: RoPE models skip it on every `nope_every`-th layer."""
        if self.positions != "rope":
            return False
        return self.nope_every == 0 or (layer + 1) % self.nope_every != 0

    def layer_has_qk_norm(self, layer: int) -> bool:
        """Whether 0-based `layer` normalizes q and k: every layer, or with 'irope' only the RoPE layers."""
        if self.qk_norm == "none":
            return False
        return registry.QK_NORM_PLACEMENTS[self.qk_norm_placement][1] == "all" or self.layer_uses_rope(layer)

    def layer_uses_local_rope(self, layer: int) -> bool:
        """Whether 0-based `layer` rotates by `rope_local_theta` (a sliding-window layer when it is set)."""
        return self.rope_local_theta is not None and self.layer_window(layer) is not None

    def layer_window(self, layer: int) -> int | None:
        """Sliding-window size of 0-based `layer`, or None for full causal attention."""
        if self.sliding_window is None:
            return None
        if self.global_every and (layer + 1) % self.global_every == 0:
            return None
        return self.sliding_window
