"""The registry of Hugging Face families: `model_type` → `Family` record, one module per family.

Adding a family is a module here defining `FAMILY` and a line below (docs/hf.md, "Adding a family").
"""

from __future__ import annotations

from harness.hf.families import (
    gemma,
    gemma2,
    gemma3,
    gpt2,
    gpt_neox,
    llama,
    llama4_text,
    mistral,
    mixtral,
    olmo2,
    olmoe,
    phi3,
    qwen2,
    qwen3,
    qwen3_moe,
    smollm3,
    starcoder2,
)
from harness.hf.family import Family

_MODULES = (gpt2, gpt_neox, llama, llama4_text, mistral, mixtral, qwen2, qwen3, qwen3_moe, gemma, gemma2, gemma3,
            olmo2, olmoe, phi3, starcoder2, smollm3)

FAMILIES: dict[str, Family] = {module.FAMILY.model_type: module.FAMILY for module in _MODULES}
# `architectures[0]` → model_type, for config dicts without `model_type` (the seed's Llama 3.2 config).
ARCHITECTURES: dict[str, str] = {arch: f.model_type for f in FAMILIES.values() for arch in f.architectures}
