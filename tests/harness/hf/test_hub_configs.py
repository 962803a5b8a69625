"""Hub-format `config.json` dicts (legacy keys, omitted defaults) read as transformers reads them, and counted
by `harness.calc` as transformers builds them (on the meta device: no weights, no memory)."""

import pytest
import torch
import transformers

from errors import ConfigError
from harness import calc
from harness.hf import model_config_from_hf

# Gemma 3 1B's sizes in the hub's legacy format: rope_theta / rope_local_base_freq / sliding_window_pattern, no
# layer_types or rope_parameters.
GEMMA3_1B = {
    "architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "attention_bias": False,
    "attn_logit_softcapping": None, "final_logit_softcapping": None, "head_dim": 256,
    "hidden_activation": "gelu_pytorch_tanh", "hidden_size": 1152, "intermediate_size": 6912,
    "max_position_embeddings": 32768, "num_attention_heads": 4, "num_hidden_layers": 26, "num_key_value_heads": 1,
    "query_pre_attn_scalar": 256, "rms_norm_eps": 1e-06, "rope_local_base_freq": 10000, "rope_scaling": None,
    "rope_theta": 1000000, "sliding_window": 512, "sliding_window_pattern": 6, "vocab_size": 262144,
}
# Gemma 3 4B's text decoder sizes, with the linear RoPE scaling of its global layers.
GEMMA3_4B_TEXT = {**GEMMA3_1B, "hidden_size": 2560, "intermediate_size": 10240, "num_attention_heads": 8,
                  "num_hidden_layers": 34, "num_key_value_heads": 4, "sliding_window": 1024, "vocab_size": 262208,
                  "max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}


def transformers_count(config: dict) -> int:
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(transformers.AutoConfig.for_model(**config))
    return sum(p.numel() for p in model.parameters())


def test_gemma3_hub_config_reads_as_transformers_reads_it():
    cfg, reference = model_config_from_hf(GEMMA3_1B), transformers.AutoConfig.for_model(**GEMMA3_1B)
    local = [kind == "sliding_attention" for kind in reference.layer_types]
    assert [cfg.layer_window(i) == reference.sliding_window for i in range(cfg.n_layers)] == local
    assert [cfg.layer_window(i) is None for i in range(cfg.n_layers)] == [not is_local for is_local in local]
    assert [cfg.layer_uses_local_rope(i) for i in range(cfg.n_layers)] == local
    assert cfg.rope_local_theta == reference.rope_parameters["sliding_attention"]["rope_theta"]
    assert cfg.rope_theta == reference.rope_parameters["full_attention"]["rope_theta"]
    assert cfg.attn_scale is None and reference.query_pre_attn_scalar == cfg.head_dim  # the default 1/√head_dim
    assert (cfg.qk_norm, cfg.qk_norm_scope, cfg.norm_position, cfg.norm_unit_offset) == ("rmsnorm", "head",
                                                                                          "sandwich", True)
    assert (cfg.attn_softcap, cfg.final_softcap, cfg.tie_embeddings) == (None, None, True)
    assert model_config_from_hf({k: v for k, v in GEMMA3_1B.items() if k != "model_type"}) == cfg
    assert calc.params(cfg) == transformers_count(GEMMA3_1B)


def test_gemma3_linear_rope_scaling_is_refused_for_import_and_counted():
    with pytest.raises(ConfigError, match="rope_parameters\\['full_attention'\\] of rope_type 'linear'"):
        model_config_from_hf(GEMMA3_4B_TEXT)
    cfg = model_config_from_hf(GEMMA3_4B_TEXT, strict=False)
    assert (cfg.rope_type, cfg.rope_theta, cfg.rope_local_theta) == ("default", 1e6, 1e4)
    assert calc.params(cfg) == transformers_count(GEMMA3_4B_TEXT)


def test_multimodal_and_mistyped_configs_say_what_would_import():
    with pytest.raises(ConfigError, match="model_type='gemma3' .* its .*text_config \\(model_type='gemma3_text'\\)"):
        model_config_from_hf({"model_type": "gemma3", "text_config": GEMMA3_1B})
    with pytest.raises(ConfigError, match="model_type='lama' is not supported.* Did you mean 'llama'\\?"):
        model_config_from_hf({"model_type": "lama"})
