"""Qwen2: q, k, v biases always; windows on the layers from max_window_layers on (or by layer_types)."""

from harness.hf.decoder import fixed_bias
from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.windows import after_max_window_layers

FAMILY = Family(
    model_type="qwen2",
    architectures=("Qwen2ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 32768,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28, "layer_types": None},
    bias=fixed_bias("qkv"),
    windows=after_max_window_layers,
)
