"""Qwen3: Qwen2's windows without its biases, plus a per-head QK-norm; head_dim defaults to 128."""

from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.windows import after_max_window_layers

FAMILY = Family(
    model_type="qwen3",
    architectures=("Qwen3ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "head_dim": 128, "max_position_embeddings": 32768,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28, "layer_types": None},
    switches={"qk_norm": "rmsnorm"},
    windows=after_max_window_layers,
)
