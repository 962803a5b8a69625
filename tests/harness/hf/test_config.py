"""`model_config_from_hf`: exact field mapping per family, and refusals that name the feature."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from errors import ConfigError
from harness.hf.config import model_config_from_hf

FIXTURE = Path(__file__).parents[2] / "fixtures" / "llama-3.2-3b-config.json"


def test_llama_3_2_3b_imports_with_its_llama3_rope_scaling():
    config = json.loads(FIXTURE.read_text())
    cfg = model_config_from_hf(config)
    assert (cfg.d_model, cfg.n_layers, cfg.n_heads, cfg.n_kv_heads) == (3072, 28, 24, 8)
    assert (cfg.d_ff, cfg.vocab_size, cfg.head_dim, cfg.mlp) == (8192, 128256, 128, "swiglu")
    assert cfg.tie_embeddings and cfg.rope_theta == 500000.0 and cfg.norm_eps == 1e-5
    assert (cfg.rope_type, cfg.rope_scaling_factor, cfg.rope_low_freq_factor, cfg.rope_high_freq_factor,
            cfg.rope_original_max_seq_len) == ("llama3", 32.0, 1.0, 4.0, 8192)
    yarn = {**config, "rope_scaling": {**config["rope_scaling"], "rope_type": "yarn"}}
    assert model_config_from_hf(yarn, strict=False).rope_type == "default"  # counted, not imported
    with pytest.raises(ConfigError, match="rope_scaling type 'yarn'"):
        model_config_from_hf(yarn)


def test_omitted_keys_take_the_transformers_class_defaults():
    qwen3 = model_config_from_hf({"model_type": "qwen3", "hidden_size": 64, "num_attention_heads": 2})
    assert qwen3.head_dim == 128  # Qwen3Config's fixed default, not hidden_size // heads
    assert (qwen3.qk_norm, qwen3.qk_norm_scope, qwen3.tie_embeddings) == ("rmsnorm", "head", False)
    mistral = model_config_from_hf({"model_type": "mistral"})
    assert mistral.sliding_window == 4096 and mistral.n_kv_heads == 8
    gpt2 = model_config_from_hf({"model_type": "gpt2"})
    assert (gpt2.mlp, gpt2.gelu_approximate, gpt2.positions, gpt2.bias) == ("gelu", "tanh", "learned", "all")


def test_gemma2_switches_and_alternating_windows():
    cfg = model_config_from_hf({"model_type": "gemma2", "num_hidden_layers": 4, "query_pre_attn_scalar": 144,
                                "head_dim": 16, "sliding_window": 8})
    assert (cfg.norm_position, cfg.norm_unit_offset, cfg.scale_embeddings) == ("sandwich", True, True)
    assert (cfg.attn_softcap, cfg.final_softcap, cfg.attn_scale) == (50.0, 30.0, 144**-0.5)
    assert (cfg.sliding_window, cfg.global_every) == (8, 2)
    assert [cfg.layer_window(i) for i in range(4)] == [8, None, 8, None]


def test_gemma_v1_legacy_gelu_means_tanh_and_olmo2_norms_are_reordered_and_full_width():
    gemma = model_config_from_hf({"model_type": "gemma", "hidden_act": "gelu"})
    assert (gemma.mlp, gemma.gelu_approximate) == ("geglu", "tanh")
    olmo2 = model_config_from_hf({"architectures": ["Olmo2ForCausalLM"]})
    assert (olmo2.norm_position, olmo2.qk_norm, olmo2.qk_norm_scope) == ("reordered", "rmsnorm", "full")


def test_smollm3_nope_layers_starcoder2_layernorm_and_phi3_windows():
    smollm3 = model_config_from_hf({"model_type": "smollm3", "num_hidden_layers": 8})
    assert (smollm3.nope_every, smollm3.rope_theta) == (4, 2000000.0)
    assert [smollm3.layer_uses_rope(i) for i in range(4)] == [True, True, True, False]
    starcoder2 = model_config_from_hf({"model_type": "starcoder2", "sliding_window": 4096})
    assert (starcoder2.norm, starcoder2.bias) == ("layernorm", "all")
    assert (starcoder2.mlp, starcoder2.gelu_approximate) == ("gelu", "tanh")
    assert starcoder2.layer_window(0) == 4096
    phi3 = model_config_from_hf({"architectures": ["Phi3ForCausalLM"], "sliding_window": 2047})
    assert (phi3.sliding_window, phi3.global_every, phi3.mlp, phi3.bias) == (2047, 0, "swiglu", "none")


def test_rope_theta_precedence_and_qwen_biases():
    rope_parameters = {"rope_type": "default", "rope_theta": 1e6}
    new_style = model_config_from_hf({"model_type": "qwen2", "rope_parameters": rope_parameters})
    assert new_style.rope_theta == 1e6 and new_style.bias == "qkv"
    old_style = model_config_from_hf({"model_type": "llama", "rope_theta": 5e5, "attention_bias": True,
                                      "mlp_bias": True})
    assert old_style.rope_theta == 5e5 and old_style.bias == "all"


def test_qwen_sliding_layers_from_max_window_layers():
    base = {"model_type": "qwen2", "num_hidden_layers": 4, "use_sliding_window": True, "sliding_window": 16}
    assert model_config_from_hf({**base, "max_window_layers": 0}).layer_window(3) == 16
    assert model_config_from_hf({**base, "max_window_layers": 4}).sliding_window is None
    with pytest.raises(ConfigError, match="layer_types pattern"):
        model_config_from_hf({**base, "max_window_layers": 2})
    assert model_config_from_hf({**base, "max_window_layers": 2}, strict=False).n_layers == 4


@pytest.mark.parametrize(
    ("config", "feature"),
    [
        ({"model_type": "llama", "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "rope_scaling type 'yarn'"),
        ({"model_type": "gpt2", "scale_attn_by_inverse_layer_idx": True}, "scale_attn_by_inverse_layer_idx"),
        ({"model_type": "gpt2", "reorder_and_upcast_attn": True}, "reorder_and_upcast_attn"),
        ({"model_type": "llama", "rope_parameters": {"rope_theta": 1e4, "partial_rotary_factor": 0.5}},
         "partial_rotary_factor=0.5"),
        ({"model_type": "gemma2", "use_bidirectional_attention": True}, "use_bidirectional_attention"),
        ({"model_type": "phi3", "rope_scaling": {"type": "longrope", "short_factor": [1.0]}}, "'longrope'"),
        # SmolLM3 windows its NoPE layers, the complement of our global_every pattern.
        ({"model_type": "smollm3", "use_sliding_window": True, "sliding_window": 64}, "layer_types pattern"),
    ],
)
def test_forward_changing_features_are_refused_for_import_but_counted(config, feature):
    with pytest.raises(ConfigError, match=feature):
        model_config_from_hf(config)
    assert model_config_from_hf(config, strict=False).n_layers > 0


@pytest.mark.parametrize(
    ("config", "feature"),
    [
        ({"model_type": "falcon"}, "model_type='falcon' is not supported; supported model_type: gemma, gemma2"),
        ({"architectures": ["BertForMaskedLM"]}, "architectures=\\['BertForMaskedLM'\\]"),
        ({}, "neither model_type nor architectures"),
        ({"model_type": "llama", "num_local_experts": 8}, "mixture of experts \\(num_local_experts=8\\)"),
        ({"model_type": "qwen3", "attention_bias": True}, "attention_bias=True with mlp_bias=False"),
        ({"model_type": "llama", "hidden_act": "relu"}, "activation 'relu'.*silu"),
        ({"model_type": "gpt2", "activation_function": "silu"}, "activation 'silu'"),
        ({"model_type": "gpt2", "add_cross_attention": True}, "add_cross_attention"),
        ({"model_type": "starcoder2", "use_bias": False}, "use_bias=False"),
        ({"model_type": "qwen2", "use_sliding_window": True, "layer_types": ["chunked_attention"] * 32},
         "chunked_attention"),
    ],
)
def test_inexpressible_configs_are_refused_even_for_counting(config, feature):
    with pytest.raises(ConfigError, match=feature):
        model_config_from_hf(config, strict=False)


def test_reading_every_family_imports_no_torch_or_transformers():
    """Family records hold weight hooks too; they must stay torch-free so `harness calc --hf-config` is instant."""
    probe = (
        "import sys\n"
        "from harness.hf.config import model_config_from_hf\n"
        "from harness.hf.families import FAMILIES\n"
        "for name in FAMILIES:\n"
        "    model_config_from_hf({'model_type': name, 'moe_layers': []}, strict=False)  # Llama 4: dense layers\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
