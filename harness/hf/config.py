"""Read a Hugging Face `config.json` dict into our `ModelConfig`, or refuse naming what we cannot express.

Torch- and transformers-free, so `harness calc --hf-config` stays instant. Every field is mapped exactly as
transformers 5.x reads it (same defaults for omitted keys, same precedence of `rope_scaling` over
`rope_parameters` over `rope_theta`), because an import whose logits drift is worse than a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from harness.config import ConfigError, ModelConfig
from harness.hf.families import (
    ARCHITECTURE_FAMILIES,
    DENSE_MLP_FAMILIES,
    EXPERT_COUNT_KEYS,
    FAMILY_DEFAULTS,
    FAMILY_SWITCHES,
    MOE_FAMILIES,
)

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


# Families whose norm epsilon is not `rms_norm_eps`.
_NORM_EPS_KEYS = {"starcoder2": "norm_epsilon", "gpt_neox": "layer_norm_eps"}


@dataclass(frozen=True)
class _HFConfig:
    """One config dict with its family's defaults, and the policy for features we cannot express."""

    raw: Mapping[str, Any]
    family: str
    strict: bool

    def get(self, key: str) -> Any:
        """The value transformers would use: the dict's, else the family config class's default."""
        return self.raw[key] if key in self.raw else FAMILY_DEFAULTS[self.family][key]

    def refuse(self, feature: str, why: str, changes_params: bool = True) -> None:
        """Raise for a feature we cannot express; non-strict reading (parameter counting) skips those that
        change no parameter, such as RoPE scaling."""
        if self.strict or changes_params:
            raise ConfigError(f"Hugging Face {self.family} config: {feature} is not supported: {why}.")


def model_config_from_hf(config: Mapping[str, Any], strict: bool = True) -> ModelConfig:
    """Our `ModelConfig` for a Hugging Face `config.json` dict (GPT-2, GPT-NeoX, Llama, Mistral, Qwen2, Qwen3,
    Gemma, Gemma 2, OLMo 2, Phi-3, StarCoder2, SmolLM3, Llama 4 (dense layers), and the mixtures of experts
    Mixtral, Qwen3-MoE, OLMoE).
    `strict=False` (for parameter counting) tolerates features that change the forward pass but no parameter
    count (RoPE scaling other than Llama 3's, partial rotary, unusual window patterns); weight import must keep
    `strict=True`. Raises ConfigError naming the unsupported feature."""
    family = _family(config)
    for key in EXPERT_COUNT_KEYS:
        # Llama 4 keeps num_local_experts even when moe_layers is empty; its own reader refuses MoE layers.
        if family not in (*MOE_FAMILIES, "llama4_text") and (config.get(key) or 0) > 1:
            raise ConfigError(
                f"Hugging Face config: mixture of experts ({key}={config[key]}) is not supported in {family}: "
                f"only {', '.join(MOE_FAMILIES)} routers are mapped (others differ in routing and shared experts)."
            )
    hf = _HFConfig(config, family, strict)
    fields = _gpt2_fields(hf) if hf.family == "gpt2" else _llama_like_fields(hf)
    return ModelConfig(**fields)


def _family(config: Mapping[str, Any]) -> str:
    model_type = config.get("model_type")
    architectures = config.get("architectures") or []
    family = model_type or next((ARCHITECTURE_FAMILIES.get(a) for a in architectures), None)
    if family in FAMILY_DEFAULTS:
        return family
    supported = ", ".join(sorted(FAMILY_DEFAULTS))
    if family is None and not architectures:
        raise ConfigError(
            f"Hugging Face config: neither model_type nor architectures is set; supported model_type: {supported}."
        )
    named = f"model_type={model_type!r}" if model_type else f"architectures={list(architectures)!r}"
    raise ConfigError(f"Hugging Face config: {named} is not supported; supported model_type: {supported}.")


def _gpt2_fields(hf: _HFConfig) -> dict[str, Any]:
    if hf.get("add_cross_attention"):
        hf.refuse("add_cross_attention=True", "our decoder has no cross-attention")
    if hf.get("scale_attn_by_inverse_layer_idx"):
        hf.refuse("scale_attn_by_inverse_layer_idx=True", "a per-layer attention scale has no switch", False)
    if hf.get("reorder_and_upcast_attn"):
        hf.refuse("reorder_and_upcast_attn=True", "its float32 upcast of attention scores has no switch", False)
    d_model = hf.get("n_embd")
    dense_mlp, approximate = _activation(hf, hf.get("activation_function"))
    return {
        "vocab_size": hf.get("vocab_size"),
        "d_model": d_model,
        "n_layers": hf.get("n_layer"),
        "n_heads": hf.get("n_head"),
        "d_ff": hf.get("n_inner") or 4 * d_model,
        "mlp": dense_mlp,
        "gelu_approximate": approximate,
        "norm": "layernorm",
        "norm_eps": hf.get("layer_norm_epsilon"),
        "norm_position": "pre",
        "positions": "learned",
        "max_seq_len": hf.get("n_positions"),
        "bias": "all",
        "tie_embeddings": hf.get("tie_word_embeddings"),
        # scale_attn_weights=False drops the 1/sqrt(head_dim) factor entirely.
        "attn_scale": None if hf.get("scale_attn_weights") else 1.0,
        "init_std": hf.get("initializer_range"),
        "scaled_init": True,
    }


def _llama_like_fields(hf: _HFConfig) -> dict[str, Any]:
    """Every family but GPT-2: rotary decoders whose differences are the fixed FAMILY_SWITCHES plus the
    config-dependent readers below."""
    family = hf.family
    d_model, n_heads = hf.get("hidden_size"), hf.get("num_attention_heads")
    head_dim = hf.get("head_dim") or d_model // n_heads
    if family in ("gemma", "gemma2") and hf.get("use_bidirectional_attention"):
        hf.refuse("use_bidirectional_attention=True", "our decoder is causal", False)
    mlp, approximate = _activation(hf, _activation_name(hf))
    sliding_window, global_every = _attention_windows(hf)
    gemma2 = family == "gemma2"
    return {
        "vocab_size": hf.get("vocab_size"),
        "d_model": d_model,
        "n_layers": hf.get("num_hidden_layers"),
        "n_heads": n_heads,
        "n_kv_heads": hf.get("num_key_value_heads") or n_heads,
        "head_dim": head_dim,
        "d_ff": hf.get("intermediate_size"),
        "mlp": mlp,
        "gelu_approximate": approximate,
        "norm_eps": hf.get(_NORM_EPS_KEYS.get(family, "rms_norm_eps")),
        "norm_position": _norm_position(hf),
        "attn_scale": _gemma2_attn_scale(hf, head_dim) if gemma2 else None,
        "attn_softcap": hf.get("attn_logit_softcapping") if gemma2 else None,
        "final_softcap": hf.get("final_logit_softcapping") if gemma2 else None,
        "positions": "rope",
        **_rope(hf),
        "nope_every": _nope_every(hf) if family in ("smollm3", "llama4_text") else 0,
        "max_seq_len": hf.get("max_position_embeddings"),
        "sliding_window": sliding_window,
        "global_every": global_every,
        "bias": _bias(hf),
        "tie_embeddings": hf.get("tie_word_embeddings"),
        "init_std": hf.get("initializer_range"),
        "scaled_init": False,
        **(_moe(hf) if family in MOE_FAMILIES else {}),
        **(_llama4(hf) if family == "llama4_text" else {}),
        **FAMILY_SWITCHES[family],
    }


def _norm_position(hf: _HFConfig) -> str:
    """Pre-norm, or GPT-NeoX's parallel residual with its two input norms (FAMILY_SWITCHES may override)."""
    return "parallel_two_norms" if hf.family == "gpt_neox" and hf.get("use_parallel_residual") else "pre"


def _activation_name(hf: _HFConfig) -> str:
    if hf.family == "gemma2":
        return hf.get("hidden_activation")
    name = hf.get("hidden_act")
    # GemmaConfig rewrites the legacy "gelu" of the official Gemma releases to the tanh form they meant.
    return "gelu_pytorch_tanh" if hf.family == "gemma" and name == "gelu" else name


def _activation(hf: _HFConfig, name: str) -> tuple[str, str]:
    """(our mlp, gelu_approximate) for a Hugging Face activation in this family (gated, or dense)."""
    column = 1 if hf.family in DENSE_MLP_FAMILIES else 0
    mlp = _ACTIVATIONS.get(name, (None, None, "none"))[column]
    if mlp is None:
        expressible = [n for n, row in _ACTIVATIONS.items() if row[column] is not None]
        hf.refuse(f"activation {name!r}", f"expressible activations in this family: {', '.join(expressible)}")
    return mlp, _ACTIVATIONS[name][2]


def _bias(hf: _HFConfig) -> str:
    """Our `bias` switch: Qwen2 always has q/k/v biases; elsewhere attention_bias covers q, k, v *and* o."""
    if hf.family == "qwen2":
        return "qkv"
    if hf.family in ("mistral", "phi3", "mixtral"):
        return "none"
    if hf.family == "gpt_neox":
        if not hf.get("attention_bias"):
            hf.refuse("attention_bias=False", "GPT-NeoX's MLP and LayerNorms keep their biases; ours have them only "
                      "with bias='all', which puts them on q, k, v, o too")
        return "all"
    if hf.family == "starcoder2":
        if not hf.get("use_bias"):
            hf.refuse("use_bias=False", "StarCoder2's LayerNorms keep their β, which ours only have with bias='all'")
        return "all"
    attention_bias = hf.get("attention_bias")
    mlp_bias = hf.get("mlp_bias") if hf.family in ("llama", "smollm3") else False
    if attention_bias == mlp_bias:
        return "all" if attention_bias else "none"
    hf.refuse(
        f"attention_bias={attention_bias} with mlp_bias={mlp_bias}",
        "our bias switch puts biases on q,k,v only ('qkv') or on every linear layer ('all')",
    )
    return "none"


def _rope(hf: _HFConfig) -> dict[str, Any]:
    """RoPE base and scaling, read the way transformers 5 standardizes them: unscaled ('default') and Llama 3.1's
    'llama3' rescaling are expressible; any other scaling or partial rotation is refused."""
    params = hf.raw.get("rope_scaling") or hf.raw.get("rope_parameters") or {}
    if hf.family == "gpt_neox":  # its config class still reads the legacy keys, with a 0.25 partial rotary default
        legacy = {"rope_theta": hf.raw.get("rotary_emb_base", 10000.0),
                  "partial_rotary_factor": hf.raw.get("rotary_pct", 0.25)}
        params = {**legacy, **params}
    if any(isinstance(value, Mapping) for value in params.values()):
        hf.refuse(f"per-layer-type rope_parameters ({', '.join(params)})", "one RoPE base serves every layer", False)
        params = next(value for value in params.values() if isinstance(value, Mapping))
    rope_type = params.get("rope_type", params.get("type", "default"))
    fields: dict[str, Any] = {"rope_theta": float(params.get("rope_theta", hf.get("rope_theta")))}
    if rope_type == "llama3":
        fields |= {
            "rope_type": "llama3",
            "rope_scaling_factor": float(params["factor"]),
            "rope_low_freq_factor": float(params["low_freq_factor"]),
            "rope_high_freq_factor": float(params["high_freq_factor"]),
            "rope_original_max_seq_len": params.get("original_max_position_embeddings")
            or hf.get("max_position_embeddings"),
        }
    elif rope_type != "default":
        hf.refuse(f"rope_scaling type {rope_type!r}", "only unscaled RoPE ('default') and 'llama3' are expressible",
                  False)
    partial = params.get("partial_rotary_factor", hf.raw.get("partial_rotary_factor", 1.0))
    if partial != 1.0:
        hf.refuse(f"partial_rotary_factor={partial}", "RoPE rotates every channel of the head here", False)
    return fields


def _llama4(hf: _HFConfig) -> dict[str, Any]:
    """Llama 4's text decoder, dense layers only: iRoPE (NoPE layers from no_rope_layers, and a weightless
    QK-norm after RoPE on the RoPE layers), dense MLPs of intermediate_size_mlp."""
    if hf.get("moe_layers") is None or hf.get("moe_layers"):
        hf.refuse(f"moe_layers={hf.get('moe_layers')}",
                  "Llama 4's MoE layers (sigmoid router, shared expert) have no mapping; only moe_layers=[] imports")
    if hf.get("attention_chunk_size") is not None:
        hf.refuse(f"attention_chunk_size={hf.get('attention_chunk_size')}", "chunked attention has no switch", False)
    if hf.get("attn_temperature_tuning"):
        hf.refuse("attn_temperature_tuning=True", "the NoPE layers' query temperature has no switch", False)
    qk_norm = "rmsnorm_noweight" if hf.get("use_qk_norm") else "none"
    placement = {"qk_norm_placement": "irope"} if qk_norm != "none" else {}
    return {"d_ff": hf.get("intermediate_size_mlp"), "qk_norm": qk_norm, **placement}


def _moe(hf: _HFConfig) -> dict[str, Any]:
    """Experts, top-k, renormalization and the expert width of Mixtral, Qwen3-MoE and OLMoE. The aux loss
    takes their convention (Switch/Mixtral's f_e), so their router_aux_loss_coef means what it meant."""
    if hf.family == "mixtral":
        if hf.get("router_jitter_noise"):
            noise = hf.get("router_jitter_noise")
            hf.refuse(f"router_jitter_noise={noise}", "training-time router noise has no switch", False)
        renormalize = True  # Mixtral renormalizes at every k
    else:
        renormalize = hf.get("norm_topk_prob")
    # transformers 5 writes Qwen3-MoE's num_experts as num_local_experts; older hub files say num_experts.
    default_key = "num_local_experts" if hf.family == "mixtral" else "num_experts"
    expert_key = next((key for key in ("num_local_experts", "num_experts") if key in hf.raw), default_key)
    n_experts = hf.get(expert_key)
    if hf.family == "qwen3_moe" and (hf.get("decoder_sparse_step") != 1 or hf.get("mlp_only_layers")):
        hf.refuse(
            f"decoder_sparse_step={hf.get('decoder_sparse_step')}, mlp_only_layers={hf.get('mlp_only_layers')}",
            "every layer must be a mixture of experts (no dense layers in between)",
        )
    if hf.family == "olmoe" and hf.get("clip_qkv") is not None:
        hf.refuse(f"clip_qkv={hf.get('clip_qkv')}", "clamping q, k and v has no switch", False)
    return {
        "n_experts": n_experts,
        "moe_top_k": hf.get("num_experts_per_tok"),
        "d_ff": hf.get("moe_intermediate_size" if hf.family == "qwen3_moe" else "intermediate_size"),
        "moe_topk_norm": "renormalize" if renormalize else "none",
        "moe_aux_loss": "switch",
    }


def _attention_windows(hf: _HFConfig) -> tuple[int | None, int]:
    """(sliding_window, global_every) reproducing the family's per-layer attention types."""
    n_layers = hf.get("num_hidden_layers")
    if hf.family in ("mistral", "phi3", "starcoder2", "mixtral"):
        return hf.get("sliding_window"), 0
    if hf.family == "qwen3_moe":  # every layer, and only with use_sliding_window (as its config class reads it)
        return (hf.get("sliding_window") if hf.get("use_sliding_window") else None), 0
    if hf.family == "smollm3":
        window = hf.get("sliding_window") if hf.get("use_sliding_window") else None
        uses_rope = _rope_layer_flags(hf)
        local = [window is not None and not rope for rope in uses_rope]  # SmolLM3 windows its NoPE layers
        default_types = ["sliding_attention" if is_local else "full_attention" for is_local in local]
        return _window_pattern(hf, hf.get("layer_types") or default_types, window)
    if hf.family in ("qwen2", "qwen3"):
        window = hf.get("sliding_window") if hf.get("use_sliding_window") else None
        first_local = hf.get("max_window_layers")
        local = [window is not None and i >= first_local for i in range(n_layers)]
        default_types = ["sliding_attention" if is_local else "full_attention" for is_local in local]
        return _window_pattern(hf, hf.get("layer_types") or default_types, window)
    if hf.family == "gemma2":
        default_types = ["sliding_attention" if (i + 1) % 2 else "full_attention" for i in range(n_layers)]
        return _window_pattern(hf, hf.get("layer_types") or default_types, hf.get("sliding_window"))
    return None, 0


def _window_pattern(hf: _HFConfig, layer_types: list[str], window: int | None) -> tuple[int | None, int]:
    """Express `layer_types` as all-global, all-local, or global on every k-th layer (k, 2k, ...)."""
    unknown = sorted(set(layer_types) - {"full_attention", "sliding_attention"})
    if unknown:
        hf.refuse(f"layer_types {unknown}", "only 'full_attention' and 'sliding_attention' layers are expressible")
    local = [kind == "sliding_attention" for kind in layer_types]
    if window is None or not any(local):
        return None, 0
    if all(local):
        return window, 0
    for every in range(2, len(local) + 1):
        if all(is_local == ((i + 1) % every != 0) for i, is_local in enumerate(local)):
            return window, every
    hf.refuse(f"layer_types pattern {layer_types}", "global layers must be every k-th layer (global_every=k)", False)
    return None, 0


def _gemma2_attn_scale(hf: _HFConfig, head_dim: int) -> float | None:
    """query_pre_attn_scalar ** -0.5; None when that is the default 1/sqrt(head_dim), so configs compare equal."""
    scalar = hf.get("query_pre_attn_scalar")
    return None if scalar == head_dim else scalar**-0.5


def _rope_layer_flags(hf: _HFConfig) -> list[int]:
    """SmolLM3's and Llama 4's per-layer RoPE flags (1: rotate, 0: NoPE), defaulting to NoPE on every
    interval-th layer."""
    interval = hf.get("no_rope_layer_interval")
    default = [int((i + 1) % interval != 0) for i in range(hf.get("num_hidden_layers"))]
    return hf.get("no_rope_layers") or default


def _nope_every(hf: _HFConfig) -> int:
    """Our nope_every=k for the RoPE flags: NoPE exactly on layers k, 2k, ... (1-based), or 0 for none."""
    uses_rope = _rope_layer_flags(hf)
    if all(uses_rope):
        return 0
    for every in range(1, len(uses_rope) + 1):
        if all(bool(rope) == ((i + 1) % every != 0) for i, rope in enumerate(uses_rope)):
            return every
    hf.refuse(f"no_rope_layers pattern {uses_rope}", "NoPE layers must be every k-th layer (nope_every=k)", False)
    return 0
