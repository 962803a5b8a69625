"""`ModelConfig`: every architecture switch of the decoder, as one flat frozen dataclass of plain values.

Users write these field names in ablation grids, so they are the product's vocabulary: keep them stable.
Derived fields (`n_kv_heads`, `head_dim`, `d_ff`) are resolved at construction, so a config that spells
out the defaults and one that leaves them to derivation are equal and hash the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Literal

from harness.config.base import ConfigBase, check, check_choice, check_int, check_positive, field_type
from harness.config.rules import Rule, check_rules, default, only_when
from harness.model import registry
from harness.model.spec.decoder import unread_fields

# A switch's valid values are the keys of its registry table (harness/model/registry.py). These types are
# derived from the tables, so registering a value is the only edit; validation reads the tables themselves,
# so a value registered later (in a test, a user's file) is valid at once.
# To the type checker a switch is any str: its values are open, registered at run time.
# A derived field's None (the default) asks `_derive` for its value, so every constructed config holds an int;
# a dataclass cannot type "None accepted, int held", so the checker sees int (and `= None` needs an ignore).
if TYPE_CHECKING:
    Mlp = str
    Norm = str
    NormPosition = str
    QKNorm = str
    QKNormScope = str
    QKNormPlacement = str
    Positions = str
    RopeType = str
    Bias = str
    GeluApproximate = str
    MoeAuxLoss = str
    MoeTopkNorm = str
    Parametrization = str
    Derived = int
else:
    Mlp = Literal[registry.options("mlp")]
    Norm = Literal[registry.options("norm")]
    NormPosition = Literal[registry.options("norm_position")]
    QKNorm = Literal[registry.options("qk_norm")]
    QKNormScope = Literal[registry.options("qk_norm_scope")]
    QKNormPlacement = Literal[registry.options("qk_norm_placement")]
    Positions = Literal[registry.options("positions")]
    RopeType = Literal[registry.options("rope_type")]
    Bias = Literal[registry.options("bias")]
    GeluApproximate = Literal[registry.options("gelu_approximate")]
    MoeAuxLoss = Literal[registry.options("moe_aux_loss")]
    MoeTopkNorm = Literal[registry.options("moe_topk_norm")]
    Parametrization = Literal[registry.options("parametrization")]
    Derived = int | None

# Llama 3 RoPE fields and their defaults (Llama 3.1's values); only rope_type='llama3' reads them.
LLAMA3_ROPE_DEFAULTS = {
    "rope_scaling_factor": 8.0,
    "rope_low_freq_factor": 1.0,
    "rope_high_freq_factor": 4.0,
    "rope_original_max_seq_len": 8192,
}
MOE_FIELDS = ("moe_aux_loss", "moe_topk_norm", "moe_capacity_factor")
ZERO_MEANS_OFF = ("nope_every", "global_every")  # int fields where 0 is valid (every other int is ≥ 1)


def derived_d_ff(d_model: int, mlp: str, multiple_of: int) -> int:
    """4·d for a dense MLP; 8/3·d rounded up to `multiple_of` for a GLU (iso-parameter with 4·d)."""
    if registry.MLPS[mlp].gated:
        return multiple_of * math.ceil(8 * d_model / 3 / multiple_of)
    return 4 * d_model


def divisors(n: int) -> str:
    """The divisors of `n`, for messages: '1, 2, 4'."""
    return ", ".join(str(k) for k in range(1, n + 1) if n % k == 0)


def named(options: Iterable[str]) -> str:
    """Options for a message: "'a', 'b' or 'c'"."""
    quoted = [repr(option) for option in options]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def check_kept_kv_heads(current: dict, changes: dict) -> None:
    """`changes` set n_heads on a config (`current`, a dict of fields) whose explicit n_kv_heads stays: name
    n_heads, the field the caller set (validation alone cannot tell which of the two was set, and blamed
    n_kv_heads)."""
    n_heads, n_kv_heads = changes.get("n_heads"), current.get("n_kv_heads")
    if "n_kv_heads" in changes or n_kv_heads is None or type(n_heads) is not int or n_heads < 1:
        return  # n_kv_heads follows n_heads, or the values are checked (and named) by __post_init__
    check(
        n_heads % n_kv_heads == 0,
        "ModelConfig", "n_heads", n_heads,
        f"it must be a multiple of n_kv_heads={n_kv_heads}, which the config keeps; set n_kv_heads as well "
        f"(n_heads={n_heads} allows n_kv_heads {divisors(n_heads)})",
    )


def _odd_head_dim(cfg: ModelConfig) -> str:
    derived = cfg.d_model % cfg.n_heads == 0 and cfg.head_dim == cfg.d_model // cfg.n_heads
    origin = f" (derived: d_model/n_heads = {cfg.d_model}/{cfg.n_heads})" if derived else ""
    others = named(p for p in registry.POSITIONS if p != "rope")
    return f"RoPE rotates channel pairs, so head_dim{origin} must be even (or use positions={others})"


def _qk_norm_set(cfg: ModelConfig) -> str:
    return f"only applies when qk_norm is set (to {named(registry.NORMS)})"


def _on_qk_norm_and_rope(cfg: ModelConfig) -> str:
    return (f"{cfg.qk_norm_placement!r} places the QK-norm relative to RoPE: it needs qk_norm set (to "
            f"{named(registry.NORMS)}) and positions='rope'")


# ModelConfig's cross-field rules, checked in this order after the fields' own checks and the derivations. A
# field that only means something beside another switch is an `only_when` row (with a setting that enables
# it, which the registry tests use); a new field needs at most one row here.
RULES: tuple[Rule, ...] = (
    Rule("n_kv_heads", lambda c: c.n_heads % c.n_kv_heads == 0,
         lambda c: f"n_heads={c.n_heads} must be divisible by n_kv_heads (valid: {divisors(c.n_heads)})"),
    Rule("head_dim", lambda c: c.positions != "rope" or c.head_dim % 2 == 0, _odd_head_dim),
    Rule("moe_top_k", lambda c: not c.is_moe or c.moe_top_k <= c.n_experts,
         lambda c: f"must be ≤ n_experts={c.n_experts}"),
    only_when("nope_every", lambda c: c.positions == "rope",
              "interleaved NoPE layers only make sense with positions='rope'", {"positions": "rope"}),
    only_when("global_every", lambda c: c.sliding_window is not None, "needs sliding_window to be set",
              {"sliding_window": 4}),
    only_when("qk_norm_scope", lambda c: c.qk_norm != "none", _qk_norm_set, {"qk_norm": "rmsnorm"}),
    only_when("qk_norm_placement", lambda c: c.qk_norm != "none" and c.positions == "rope", _on_qk_norm_and_rope,
              {"qk_norm": "rmsnorm", "positions": "rope"}),
    only_when("rope_type", lambda c: c.positions == "rope", "RoPE scaling needs positions='rope'",
              {"positions": "rope"}),
    *(only_when(name, lambda c: c.rope_type == "llama3", "only applies with rope_type='llama3'",
                {"rope_type": "llama3"}) for name in LLAMA3_ROPE_DEFAULTS),
    Rule("rope_high_freq_factor", lambda c: c.rope_high_freq_factor > c.rope_low_freq_factor,
         lambda c: f"must exceed rope_low_freq_factor={c.rope_low_freq_factor} (Llama 3 blends between the two)"),
    only_when("rope_local_theta", lambda c: c.positions == "rope" and c.sliding_window is not None,
              "the RoPE base of sliding-window layers needs positions='rope' and sliding_window set",
              {"positions": "rope", "sliding_window": 4}),
    *(only_when(name, lambda c: c.is_moe, "only applies to a mixture of experts (n_experts > 1)",
                {"n_experts": 4}) for name in MOE_FIELDS),
    Rule("parametrization", lambda c: c.parametrization == "standard" or c.mup_base_width is not None,
         lambda c: f"scales with d_model / mup_base_width: set mup_base_width, the d_model at which it equals the "
                   f"standard parametrization (the width whose LR you tuned, e.g. mup_base_width={c.d_model})",
         {"mup_base_width": 16}),
    only_when("mup_base_width", lambda c: c.parametrization != "standard",
              "only applies with parametrization='mup' (the width at which μP equals the standard parametrization)",
              {"parametrization": "mup"}),
)


@dataclass(frozen=True)
class ModelConfig(ConfigBase):
    """One decoder-only transformer. See README's switch table for what each field means.

    Validation: every field by its type (ints ≥ 1, floats positive and finite, bools, switch values from the
    registry; `| None` allows None), then the derived fields, then the cross-field `RULES`."""

    vocab_size: int = 4096
    d_model: int = 128
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: Derived = None  # type: ignore[assignment]  # None: = n_heads (MHA); 1 is MQA; in between is GQA
    head_dim: Derived = None  # type: ignore[assignment]  # None: d_model // n_heads
    d_ff: Derived = None  # type: ignore[assignment]  # None: derived by `derived_d_ff`
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
    parametrization: Parametrization = "standard"  # mup: init, Adam LRs, attention and logits scale with width
    mup_base_width: int | None = None  # μP's base: the d_model at which it equals the standard parametrization

    def __post_init__(self) -> None:
        self.store_floats()
        self._check_fields()
        self._derive()
        check_rules(self, RULES)

    def _check_fields(self) -> None:
        """Each field on its own, by its annotation; a switch's value against its registry table."""
        name = type(self).__name__
        tables = registry.tables()
        for field in self.field_names():
            value = getattr(self, field)
            kind, optional = field_type(type(self), field)
            if field in tables:
                check_choice(name, field, value, tuple(tables[field]))
            elif kind is int:
                check_int(name, field, value, minimum=0 if field in ZERO_MEANS_OFF else 1, allow_none=optional)
            elif kind is float:
                check_positive(name, field, value, allow_none=optional)
                check(value is None or math.isfinite(value), name, field, value, "must be finite")
            elif kind is bool:
                check(isinstance(value, bool), name, field, value, "must be true or false")
            else:  # a field nothing here checks (a Literal with no registry table, a str, …) would go unvalidated
                raise TypeError(f"{name}.{field}: no check for its type {kind!r}")

    def _derive(self) -> None:
        """Resolve the fields left to derivation (None): n_kv_heads, head_dim and d_ff."""
        if self.head_dim is None:
            check(
                self.d_model % self.n_heads == 0,
                type(self).__name__, "n_heads", self.n_heads,
                f"d_model={self.d_model} must be divisible by n_heads, or set head_dim explicitly",
            )
        for field, value in self._derivations().items():
            if getattr(self, field) is None:
                object.__setattr__(self, field, value)

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

    def effective(self) -> ModelConfig:
        """This config with every field that none of its components reads at its default (`norm_eps` under a
        norm with no ε, `gelu_approximate` beside SwiGLU; `registry.Part.reads`): the same model, spelled one
        way. A config whose unread fields are at their defaults is its own effective config."""
        unread = {name: default(type(self), name) for name in unread_fields(self)}
        if all(getattr(self, name) == value for name, value in unread.items()):
            return self
        return type(self).from_dict({**self.to_dict(), **unread})

    def hashed_fields(self) -> dict[str, Any]:
        """The run key hashes the effective config's changed fields: a field no component reads changes no
        run, so it cannot make a new one."""
        return self.effective().changed_fields()

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
