"""Gemma: RMSNorm stored as w and applied as 1 + w, embeddings scaled by √d, GeGLU with tanh GELU."""

from harness.hf.decoder import causal_only
from harness.hf.family import ROTARY_DEFAULTS, Family

FAMILY = Family(
    model_type="gemma",
    architectures=("GemmaForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576,
              "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
              "hidden_act": "gelu_pytorch_tanh", "max_position_embeddings": 8192, "tie_word_embeddings": True,
              "use_bidirectional_attention": None},
    switches={"norm_unit_offset": True, "scale_embeddings": True},
    quirks=(causal_only,),
    # GemmaConfig rewrites the legacy "gelu" of the official Gemma releases to the tanh form they meant.
    activation_aliases={"gelu": "gelu_pytorch_tanh"},
)
