"""OLMo 2: norms on the sublayer outputs only (our reordered placement) and QK-norm over all heads at once."""

from harness.hf.family import ROTARY_DEFAULTS, Family

FAMILY = Family(
    model_type="olmo2",
    architectures=("Olmo2ForCausalLM",),
    defaults={**ROTARY_DEFAULTS, "vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32, "rms_norm_eps": 1e-5},
    switches={"norm_position": "reordered", "qk_norm": "rmsnorm", "qk_norm_scope": "full"},
    # Despite its name, post_attention_layernorm normalizes the attention's output.
    layer_norms={"post_attention_layernorm": "norm_attn_out", "post_feedforward_layernorm": "norm_mlp_out"},
)
