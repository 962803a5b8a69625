"""Read a Hugging Face `config.json` dict into our `ModelConfig`, or refuse naming what we cannot express.

Torch- and transformers-free, so `harness calc --hf-config` stays instant. Every field is mapped exactly as
transformers 5.x reads it (same defaults for omitted keys, same precedence of `rope_scaling` over
`rope_parameters` over `rope_theta`), because an import whose logits drift is worse than a refusal. What a
family reads differently is in its record (`harness.hf.family.Family`, registered in `harness.hf.families`).
"""

from __future__ import annotations

from typing import Any, Mapping

from errors import ConfigError, closest
from harness.config import ModelConfig
from harness.hf.families import ARCHITECTURES, FAMILIES
from harness.hf.family import Family
from harness.hf.source import HFConfig

# Config keys whose value > 1 means a routed mixture of experts (Mixtral, Qwen-MoE, OLMoE, DeepSeek, gpt-oss).
EXPERT_COUNT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


def model_config_from_hf(config: Mapping[str, Any], strict: bool = True) -> ModelConfig:
    """Our `ModelConfig` for a Hugging Face `config.json` dict of any family in `harness.hf.families` (GPT-2,
    GPT-NeoX, Llama, Mistral, Qwen2, Qwen3, Gemma, Gemma 2, Gemma 3, OLMo 2, Phi-3, StarCoder2, SmolLM3, Llama 4
    (dense layers), and the mixtures of experts Mixtral, Qwen3-MoE, OLMoE).
    `strict=False` (for parameter counting) tolerates features that change the forward pass but no parameter
    count (RoPE scaling other than Llama 3's, partial rotary, unusual window patterns); weight import must keep
    `strict=True`. Raises ConfigError naming the unsupported feature."""
    family = family_of(config)
    if family.experts is None:
        _refuse_experts(config, family)
    hf = HFConfig(config, family, strict)
    fields = family.fields(hf)
    for quirk in family.quirks:
        fields |= quirk(hf)
    if family.experts is not None:
        fields |= family.experts(hf)
    return ModelConfig(**(fields | dict(family.switches)))


def family_of(config: Mapping[str, Any]) -> Family:
    """The family of a config dict: its `model_type`, or its `architectures[0]` when it has none (the seed's
    Llama 3.2 config)."""
    model_type = config.get("model_type")
    architectures = config.get("architectures") or []
    name = model_type or next((ARCHITECTURES.get(a) for a in architectures), None)
    if name in FAMILIES:
        return FAMILIES[name]
    supported = ", ".join(sorted(FAMILIES))
    if name is None and not architectures:
        raise ConfigError(
            f"Hugging Face config: neither model_type nor architectures is set; supported model_type: {supported}."
        )
    named = f"model_type={model_type!r}" if model_type else f"architectures={list(architectures)!r}"
    raise ConfigError(f"Hugging Face config: {named} is not supported; supported model_type: {supported}."
                      + _hint(config, model_type))


def _hint(config: Mapping[str, Any], model_type: str | None) -> str:
    """What would import instead: a multimodal config's text_config, or the closest model_type to a typo."""
    text_config = config.get("text_config")
    if isinstance(text_config, Mapping):
        inner = text_config.get("model_type")
        named = f" (model_type={inner!r})" if inner else ""
        return f" It is a multimodal config: import its language model's text_config{named} instead."
    hint = closest(model_type, FAMILIES) if model_type else None
    return f" Did you mean {hint!r}?" if hint else ""


def _refuse_experts(config: Mapping[str, Any], family: Family) -> None:
    """A family without an experts reader has no router mapping: an expert count > 1 is refused."""
    for key in EXPERT_COUNT_KEYS:
        if (config.get(key) or 0) > 1:
            readers = ", ".join(sorted(name for name, f in FAMILIES.items() if f.experts is not None))
            raise ConfigError(
                f"Hugging Face config: mixture of experts ({key}={config[key]}) is not supported in "
                f"{family.model_type}: expert layers are read only in {readers} (others differ in routing and "
                "shared experts)."
            )
