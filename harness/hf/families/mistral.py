"""Mistral: Llama with GQA and a sliding window on every layer; no biases whatever the config says."""

from harness.hf.decoder import fixed_bias
from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.windows import every_layer

FAMILY = Family(
    model_type="mistral",
    architectures=("MistralForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
              "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "max_position_embeddings": 4096 * 32, "sliding_window": 4096},
    bias=fixed_bias("none"),
    windows=every_layer,
)
