"""`Family`: everything harness knows about one Hugging Face model family, in one record.

The generic readers (`harness/hf/config.py`, `weights.py`) ask a family's record and never name a family; a
family is a file under `harness/hf/families/` and a line in their registry. Torch-free: weight hooks receive
tensors and use only their methods.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Mapping

from harness.hf.decoder import attention_and_mlp_bias, rotary_decoder_fields
from harness.hf.rope import standard_rope_parameters
from harness.hf.windows import no_windows

if TYPE_CHECKING:
    from harness.config import ModelConfig
    from harness.hf.source import HFConfig

Reader = Callable[["HFConfig"], dict[str, Any]]  # a config dict → some ModelConfig fields

# Config keys every rotary decoder reads, with Llama's config-class defaults (a family overrides what differs).
ROTARY_DEFAULTS: Mapping[str, Any] = MappingProxyType({
    "num_key_value_heads": None,
    "head_dim": None,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 2048,
    "initializer_range": 0.02,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "mlp_bias": False,
    "rope_theta": 10000.0,
})

# Hugging Face decoder-layer norm → our norm slot (docs/internals.md): `in` normalizes the sublayer input, `out`
# its output before the residual add.
PRE_NORM_SLOTS: Mapping[str, str] = MappingProxyType(
    {"input_layernorm": "norm_attn_in", "post_attention_layernorm": "norm_mlp_in"}
)
# Gemma 2 and 3 wrap both sublayers: a norm before and after each is our sandwich.
SANDWICH_NORM_SLOTS: Mapping[str, str] = MappingProxyType({
    "input_layernorm": "norm_attn_in",
    "post_attention_layernorm": "norm_attn_out",
    "pre_feedforward_layernorm": "norm_mlp_in",
    "post_feedforward_layernorm": "norm_mlp_out",
})


@dataclass(frozen=True)
class Family:
    """One Hugging Face family: how to recognise it, read its `config.json`, and place its weights.

    Config side: `defaults` are the transformers 5.x config-class defaults of every key the readers use (a hub
    `config.json` omits keys at their default); `fields` reads the whole config (GPT-2's own reader, or the rotary
    decoder's, which consults the data fields below); `quirks` add or override fields in order; `experts` reads
    a mixture of experts (a family without it refuses one); `switches` are fixed by the architecture and win.
    Weight side: `rename` maps a Hugging Face parameter name to ours (None: the Llama layout, with
    `module_renames` renaming module paths inside a decoder layer and `layer_norms` placing its norms);
    `adapt_weight(our_name, tensor, cfg)` transforms a tensor (transposes, row orders); fused projections are
    split by their names (`weights._unfused`).
    """

    model_type: str
    architectures: tuple[str, ...]
    defaults: Mapping[str, Any]
    switches: Mapping[str, Any] = field(default_factory=dict)
    fields: Reader = rotary_decoder_fields
    quirks: tuple[Reader, ...] = ()
    experts: Reader | None = None
    activation_key: str = "hidden_act"
    activation_aliases: Mapping[str, str] = field(default_factory=dict)  # a legacy name → the one it means
    dense_mlp: bool = False  # up, act, down (GPT-2, StarCoder2, GPT-NeoX) rather than a gated MLP
    norm_eps_key: str = "rms_norm_eps"
    bias: Callable[[HFConfig], str] = attention_and_mlp_bias  # → our `bias` switch
    reads_mlp_bias: bool = False  # the config's mlp_bias key exists (Llama, SmolLM3); else the MLP has none
    rope_parameters: Callable[[HFConfig], Mapping[str, Any]] = standard_rope_parameters  # the dict whose RoPE we read
    windows: Callable[[HFConfig], tuple[int | None, int]] = no_windows  # → (sliding_window, global_every)
    layer_norms: Mapping[str, str] = field(default_factory=lambda: PRE_NORM_SLOTS)
    module_renames: Mapping[str, str] = field(default_factory=dict)  # a decoder layer's module path → ours
    rename: Callable[[str], str | None] | None = None
    adapt_weight: Callable[[str, Any, ModelConfig], Any] | None = None
