"""The rotary decoder's reader: the fields every family but GPT-2 reads the same way, asking the family's record
(`harness.hf.family.Family`) where they differ (activation key, norm epsilon key, bias, RoPE dict, windows)."""

from __future__ import annotations

from typing import Any

from harness.hf.rope import rope_fields
from harness.hf.source import HFConfig

# Hugging Face activation name → (our mlp in a gated family, our mlp in a dense one, gelu_approximate);
# None where we have no such MLP (no dense SiLU, no ReLU-gated GLU).
_ACTIVATIONS: dict[str, tuple[str | None, str | None, str]] = {
    "silu": ("swiglu", None, "none"),
    "swish": ("swiglu", None, "none"),
    "gelu": ("geglu", "gelu", "none"),
    "gelu_new": ("geglu", "gelu", "tanh"),
    "gelu_pytorch_tanh": ("geglu", "gelu", "tanh"),
    "relu": (None, "relu", "none"),
}


def rotary_decoder_fields(hf: HFConfig) -> dict[str, Any]:
    """Our fields for a RoPE decoder (every family but GPT-2), before the family's quirks and fixed switches."""
    family = hf.family
    mlp, approximate = activation(hf)
    sliding_window, global_every = family.windows(hf)
    return {
        "vocab_size": hf.get("vocab_size"),
        "d_model": hf.get("hidden_size"),
        "n_layers": hf.get("num_hidden_layers"),
        "n_heads": hf.get("num_attention_heads"),
        "n_kv_heads": hf.get("num_key_value_heads") or hf.get("num_attention_heads"),
        "head_dim": head_dim(hf),
        "d_ff": hf.get("intermediate_size"),
        "mlp": mlp,
        "gelu_approximate": approximate,
        "norm_eps": hf.get(family.norm_eps_key),
        "norm_position": "pre",
        "positions": "rope",
        **rope_fields(hf),
        "max_seq_len": hf.get("max_position_embeddings"),
        "sliding_window": sliding_window,
        "global_every": global_every,
        "bias": family.bias(hf),
        "tie_embeddings": hf.get("tie_word_embeddings"),
        "init_std": hf.get("initializer_range"),
        "scaled_init": False,
    }


def head_dim(hf: HFConfig) -> int:
    """`head_dim`, or hidden size / heads when the config (and its class default) leaves it None."""
    return hf.get("head_dim") or hf.get("hidden_size") // hf.get("num_attention_heads")


def activation(hf: HFConfig) -> tuple[str, str]:
    """(our mlp, gelu_approximate) for the family's activation key, in its MLP shape (gated, or dense)."""
    family = hf.family
    name = hf.get(family.activation_key)
    name = family.activation_aliases.get(name, name)
    column = 1 if family.dense_mlp else 0
    mlp = _ACTIVATIONS.get(name, (None, None, "none"))[column]
    if mlp is None:
        expressible = [n for n, row in _ACTIVATIONS.items() if row[column] is not None]
        hf.refuse(f"activation {name!r}", f"expressible activations in this family: {', '.join(expressible)}")
    return mlp, _ACTIVATIONS[name][2]


def attention_and_mlp_bias(hf: HFConfig) -> str:
    """Our `bias` from `attention_bias` (q, k, v *and* o) and, where the family has it, `mlp_bias`: both or neither."""
    attention_bias = hf.get("attention_bias")
    mlp_bias = hf.get("mlp_bias") if hf.family.reads_mlp_bias else False
    if attention_bias == mlp_bias:
        return "all" if attention_bias else "none"
    hf.refuse(
        f"attention_bias={attention_bias} with mlp_bias={mlp_bias}",
        "our bias switch puts biases on q,k,v only ('qkv') or on every linear layer ('all')",
    )
    return "none"


def fixed_bias(value: str):
    """A family whose biases do not depend on its config (Qwen2: always q, k, v; Mistral: none)."""

    def bias(hf: HFConfig) -> str:
        return value

    return bias


def causal_only(hf: HFConfig) -> dict[str, Any]:
    """Gemma's `use_bidirectional_attention` turns the causal mask off, which our decoder never does."""
    if hf.get("use_bidirectional_attention"):
        hf.refuse("use_bidirectional_attention=True", "our decoder is causal", False)
    return {}
