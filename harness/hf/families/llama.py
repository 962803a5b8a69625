"""Llama (1–3.x): the rotary decoder every other family is told apart from; Llama 3.1's RoPE scaling."""

from harness.hf.family import ROTARY_DEFAULTS, Family

FAMILY = Family(
    model_type="llama",
    architectures=("LlamaForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32},
    reads_mlp_bias=True,
)
