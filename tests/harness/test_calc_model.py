"""The calculator equals the built model: `params(cfg) == sum(p.numel())` for every preset and for sampled
combinations of every switch, and per layer too. Models are built on the meta device: shapes, no storage."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import calc
from harness.config import ModelConfig
from harness.config.base import literal_options
from harness.model import build_model
from harness.presets import PRESETS


def built_counts(cfg: ModelConfig) -> tuple[int, list[int]]:
    """(total, per-layer) parameter counts of `build_model(cfg)`, without allocating weights."""
    with torch.device("meta"):
        model = build_model(cfg)
    per_layer = [sum(p.numel() for p in layer.parameters()) for layer in model.layers]
    return sum(p.numel() for p in model.parameters()), per_layer


def options(field: str) -> st.SearchStrategy[str]:
    """Every value of a Literal switch, read from ModelConfig so new values get sampled too."""
    return st.sampled_from(literal_options(ModelConfig, field))


@st.composite
def configs(draw) -> ModelConfig:
    n_kv_heads = draw(st.sampled_from([1, 2, 4]))
    n_heads = n_kv_heads * draw(st.sampled_from([1, 2]))
    positions = draw(options("positions"))
    qk_norm = draw(options("qk_norm"))
    n_experts = draw(st.sampled_from([1, 3]))
    return ModelConfig(
        vocab_size=draw(st.integers(16, 64)),
        d_model=8 * n_heads,
        n_layers=draw(st.integers(1, 3)),
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=draw(st.sampled_from([None, 4, 6])),
        d_ff=draw(st.sampled_from([None, 12, 20])),
        mlp=draw(options("mlp")),
        n_experts=n_experts,
        moe_top_k=draw(st.integers(1, n_experts)),
        norm=draw(options("norm")),
        norm_position=draw(options("norm_position")),
        qk_norm=qk_norm,
        qk_norm_scope=draw(options("qk_norm_scope")) if qk_norm != "none" else "head",
        attn_sinks=draw(st.booleans()),
        positions=positions,
        nope_every=draw(st.integers(0, 2)) if positions == "rope" else 0,
        max_seq_len=draw(st.integers(4, 32)),
        bias=draw(options("bias")),
        tie_embeddings=draw(st.booleans()),
        norm_unit_offset=draw(st.booleans()),
        sliding_window=draw(st.sampled_from([None, 4])),
    )


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_counts_like_its_built_model(name):
    cfg = PRESETS[name]()
    total, per_layer = built_counts(cfg)
    assert calc.params(cfg) == total
    assert calc.per_layer_params(cfg) == per_layer


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs())
def test_sampled_switch_combinations_count_like_the_built_model(cfg):
    total, per_layer = built_counts(cfg)
    assert calc.params(cfg) == total
    assert calc.per_layer_params(cfg) == per_layer
