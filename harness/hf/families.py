"""The Hugging Face families we import, and what a `config.json` means when it leaves a key out.

A hub `config.json` omits keys whose value is the config class's default, so reading one exactly needs those
defaults. The values below are the transformers 5.x config-class defaults, restricted to the keys that change
the forward pass or the parameter count.
"""

from __future__ import annotations

from typing import Any

# Keys shared by the Llama-like families (all but GPT-2), with Llama's defaults.
_LLAMA_LIKE: dict[str, Any] = {
    "num_key_value_heads": None,
    "head_dim": None,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "max_position_embeddings": 2048,
    "initializer_range": 0.02,
    "tie_word_embeddings": False,
    "attention_bias": False,
    "mlp_bias": False,
    "rope_theta": 10000.0,
}

FAMILY_DEFAULTS: dict[str, dict[str, Any]] = {
    "gpt2": {
        "vocab_size": 50257,
        "n_positions": 1024,
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
        "n_inner": None,
        "activation_function": "gelu_new",
        "layer_norm_epsilon": 1e-5,
        "initializer_range": 0.02,
        "scale_attn_weights": True,
        "scale_attn_by_inverse_layer_idx": False,
        "reorder_and_upcast_attn": False,
        "add_cross_attention": False,
        "tie_word_embeddings": True,
    },
    "llama": {**_LLAMA_LIKE, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32},
    "mistral": {**_LLAMA_LIKE, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                "max_position_embeddings": 4096 * 32, "sliding_window": 4096},
    "qwen2": {**_LLAMA_LIKE, "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 32768,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28, "layer_types": None},
    "qwen3": {**_LLAMA_LIKE, "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
              "num_hidden_layers": 32, "num_attention_heads": 32, "head_dim": 128, "max_position_embeddings": 32768,
              "use_sliding_window": False, "sliding_window": 4096, "max_window_layers": 28, "layer_types": None},
    "gemma": {**_LLAMA_LIKE, "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576,
              "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
              "hidden_act": "gelu_pytorch_tanh", "max_position_embeddings": 8192, "tie_word_embeddings": True,
              "use_bidirectional_attention": None},
    "gemma2": {**_LLAMA_LIKE, "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
               "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
               "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 8192,
               "tie_word_embeddings": True, "query_pre_attn_scalar": 256, "sliding_window": 4096,
               "layer_types": None, "final_logit_softcapping": 30.0, "attn_logit_softcapping": 50.0,
               "use_bidirectional_attention": None},
    "olmo2": {**_LLAMA_LIKE, "vocab_size": 50304, "hidden_size": 4096, "intermediate_size": 11008,
              "num_hidden_layers": 32, "num_attention_heads": 32, "rms_norm_eps": 1e-5},
    "phi3": {**_LLAMA_LIKE, "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192,
             "num_hidden_layers": 32, "num_attention_heads": 32, "max_position_embeddings": 4096,
             "rms_norm_eps": 1e-5, "sliding_window": None},
    "starcoder2": {**_LLAMA_LIKE, "vocab_size": 49152, "hidden_size": 3072, "intermediate_size": 12288,
                   "num_hidden_layers": 30, "num_attention_heads": 24, "num_key_value_heads": 2,
                   "hidden_act": "gelu_pytorch_tanh", "max_position_embeddings": 4096, "initializer_range": 0.018042,
                   "norm_epsilon": 1e-5, "sliding_window": None, "use_bias": True, "tie_word_embeddings": True},
    "gpt_neox": {**_LLAMA_LIKE, "vocab_size": 50432, "hidden_size": 6144, "intermediate_size": 24576,
                 "num_hidden_layers": 44, "num_attention_heads": 64, "hidden_act": "gelu", "layer_norm_eps": 1e-5,
                 "use_parallel_residual": True, "attention_bias": True},
    "llama4_text": {**_LLAMA_LIKE, "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
                    "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
                    "num_key_value_heads": 8, "head_dim": 128, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                    "max_position_embeddings": 4096 * 32, "no_rope_layers": None, "no_rope_layer_interval": 4,
                    "use_qk_norm": True, "moe_layers": None, "attention_chunk_size": 8192,
                    "attn_temperature_tuning": True},
    "mixtral": {**_LLAMA_LIKE, "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
                "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "rms_norm_eps": 1e-5,
                "max_position_embeddings": 4096 * 32, "rope_theta": 1e6, "sliding_window": None,
                "num_local_experts": 8, "num_experts_per_tok": 2, "router_jitter_noise": 0.0},
    "qwen3_moe": {**_LLAMA_LIKE, "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
                  "moe_intermediate_size": 768, "num_hidden_layers": 24, "num_attention_heads": 32,
                  "num_key_value_heads": 4, "max_position_embeddings": 32768, "use_sliding_window": False,
                  "sliding_window": 4096, "num_experts": 128, "num_experts_per_tok": 8, "norm_topk_prob": False,
                  "decoder_sparse_step": 1, "mlp_only_layers": []},
    "olmoe": {**_LLAMA_LIKE, "vocab_size": 50304, "hidden_size": 2048, "intermediate_size": 2048,
              "num_hidden_layers": 16, "num_attention_heads": 16, "rms_norm_eps": 1e-5, "max_position_embeddings": 4096,
              "num_experts": 64, "num_experts_per_tok": 8, "norm_topk_prob": False, "clip_qkv": None},
    "smollm3": {**_LLAMA_LIKE, "vocab_size": 128256, "hidden_size": 2048, "intermediate_size": 11008,
                "num_hidden_layers": 36, "num_attention_heads": 16, "num_key_value_heads": 4,
                "max_position_embeddings": 32768, "tie_word_embeddings": True, "rope_theta": 2000000.0,
                "use_sliding_window": False,
                "sliding_window": None, "no_rope_layers": None, "no_rope_layer_interval": 4, "layer_types": None},
}

# What each family's architecture fixes regardless of its config values (our switch → value); everything else
# is read from the config. GPT-2's fixed switches live with its reader, which shares nothing with these.
FAMILY_SWITCHES: dict[str, dict[str, Any]] = {
    "llama": {},
    "mistral": {},
    "qwen2": {},
    "qwen3": {"qk_norm": "rmsnorm"},
    "gemma": {"norm_unit_offset": True, "scale_embeddings": True},
    "gemma2": {"norm_position": "sandwich", "norm_unit_offset": True, "scale_embeddings": True},
    # OLMo 2 normalizes only sublayer outputs, and q/k over all heads at once.
    "olmo2": {"norm_position": "reordered", "qk_norm": "rmsnorm", "qk_norm_scope": "full"},
    "phi3": {},
    "starcoder2": {"norm": "layernorm"},
    "smollm3": {},
    "gpt_neox": {"norm": "layernorm"},
    "llama4_text": {},
    "mixtral": {},
    "qwen3_moe": {"qk_norm": "rmsnorm"},
    # OLMoE normalizes q and k over all heads at once, like OLMo 2, but keeps pre-norm blocks.
    "olmoe": {"qk_norm": "rmsnorm", "qk_norm_scope": "full"},
}

# `architectures[0]` → family, for config dicts without `model_type` (the seed's Llama 3.2 config).
ARCHITECTURE_FAMILIES: dict[str, str] = {
    "GPT2LMHeadModel": "gpt2",
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "GemmaForCausalLM": "gemma",
    "Gemma2ForCausalLM": "gemma2",
    "Olmo2ForCausalLM": "olmo2",
    "Phi3ForCausalLM": "phi3",
    "Starcoder2ForCausalLM": "starcoder2",
    "SmolLM3ForCausalLM": "smollm3",
    "GPTNeoXForCausalLM": "gpt_neox",
    "Llama4ForCausalLM": "llama4_text",
    "MixtralForCausalLM": "mixtral",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "OlmoeForCausalLM": "olmoe",
}

# Families whose MLP is dense (up, act, down) rather than gated.
DENSE_MLP_FAMILIES = ("gpt2", "starcoder2", "gpt_neox")

# Config keys whose value > 1 means a routed mixture of experts (Mixtral, Qwen-MoE, OLMoE, DeepSeek, gpt-oss).
EXPERT_COUNT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
# The mixture-of-experts families whose routing we reproduce: softmax router, top-k, optional renormalization,
# no shared experts.
MOE_FAMILIES = ("mixtral", "qwen3_moe", "olmoe")
