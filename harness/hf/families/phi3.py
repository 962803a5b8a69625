"""Phi-3: Llama with fused qkv_proj and gate_up_proj (split on import) and an optional window on every layer."""

from harness.hf.decoder import fixed_bias
from harness.hf.family import ROTARY_DEFAULTS, Family
from harness.hf.windows import every_layer

FAMILY = Family(
    model_type="phi3",
    architectures=("Phi3ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192,
              "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 4096,
              "rms_norm_eps": 1e-5, "sliding_window": None},
    bias=fixed_bias("none"),
    windows=every_layer,
)
