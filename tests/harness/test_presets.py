"""Presets: each keeps its family's architecture switches, overrides re-derive, typos are refused helpfully."""

import subprocess
import sys

import pytest

from errors import ConfigError
from harness import calc
from harness.config.model import derived_d_ff
from harness.presets import PRESETS, from_name

# The switches that make each family what it is (issue 2, part 4).
FAMILY_SWITCHES = {
    "tiny": dict(d_model=64, n_layers=2, n_heads=4, n_kv_heads=2, mlp="swiglu", norm="rmsnorm", norm_position="pre",
                 positions="rope", qk_norm="none", vocab_size=1024, max_seq_len=128, tie_embeddings=True),
    "stack-100m": dict(d_model=512, n_layers=30, n_heads=8, n_kv_heads=2, head_dim=64, mlp="swiglu", d_ff=1365,
                       norm="rmsnorm", norm_position="pre", qk_norm="rmsnorm", qk_norm_scope="head", positions="rope",
                       nope_every=4, bias="none", tie_embeddings=True, vocab_size=32768),
    "gpt2": dict(norm="layernorm", bias="all", positions="learned", mlp="gelu", gelu_approximate="tanh",
                 norm_position="pre", tie_embeddings=True, n_kv_heads=6, n_heads=6),
    "llama3": dict(d_model=256, n_layers=4, n_heads=8, n_kv_heads=2, vocab_size=8192, max_seq_len=256, mlp="swiglu",
                   norm="rmsnorm", norm_position="pre", rope_theta=500000.0, tie_embeddings=False, bias="none"),
    "qwen3": dict(qk_norm="rmsnorm", qk_norm_scope="head", rope_theta=1e6, n_heads=8, n_kv_heads=4,
                  tie_embeddings=True, bias="none", mlp="swiglu"),
    "gemma2": dict(norm_position="sandwich", norm_unit_offset=True, scale_embeddings=True, mlp="geglu",
                   gelu_approximate="tanh", attn_softcap=50.0, final_softcap=30.0, attn_scale=64**-0.5,
                   head_dim=64, global_every=2, tie_embeddings=True),
    "olmo2": dict(norm_position="reordered", qk_norm="rmsnorm", qk_norm_scope="full", tie_embeddings=False,
                  bias="none", mlp="swiglu", norm="rmsnorm"),
}


def test_every_preset_is_described():
    assert set(FAMILY_SWITCHES) == set(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_keeps_its_family_switches(name):
    cfg = from_name(name)
    assert {field: getattr(cfg, field) for field in FAMILY_SWITCHES[name]} == FAMILY_SWITCHES[name]


def test_stack_100m_is_thirty_seed_blocks():
    cfg = from_name("stack-100m")
    assert calc.per_layer_params(cfg) == [2_753_152] * 30
    assert calc.params(cfg) == 30 * 2_753_152 + 32768 * 512 + 512  # + tied embedding + final norm
    assert [cfg.layer_uses_rope(i) for i in range(4)] == [True, True, True, False]


def test_gemma2_alternates_local_and_global_layers():
    cfg = from_name("gemma2")
    assert cfg.sliding_window < cfg.max_seq_len
    assert [cfg.layer_window(i) for i in range(4)] == [cfg.sliding_window, None, cfg.sliding_window, None]


@pytest.mark.parametrize("name", ["gpt2", "qwen3", "gemma2", "olmo2"])
def test_proxies_are_proxy_scale(name):
    assert 10_000_000 <= calc.params(from_name(name)) <= 30_000_000


def test_overrides_apply_before_derivation():
    cfg = from_name("tiny", d_model=128)
    assert cfg.head_dim == 128 // 4
    assert cfg.d_ff == derived_d_ff(128, "swiglu", cfg.ffn_multiple_of)


def test_unknown_preset_names_the_valid_ones_and_the_closest():
    with pytest.raises(ConfigError, match=r"'lama3'.*'tiny', 'stack-100m'.*Did you mean 'llama3'\?"):
        from_name("lama3")


def test_unknown_override_field_is_refused():
    with pytest.raises(ConfigError, match=r"d_modle.*did you mean 'd_model'"):
        from_name("tiny", d_modle=128)


def test_presets_and_calc_do_not_import_torch():
    code = "import sys, harness.presets, harness.calc; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
