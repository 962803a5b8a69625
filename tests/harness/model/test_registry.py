"""Every value of every switch builds, runs forward and backward, and stays finite; plus random combinations.

Switch values come from ModelConfig's Literal types and field types, so a new value or field is covered (or,
if it is neither a Literal nor listed below, makes `test_every_field_is_classified` fail).
"""

import dataclasses
import random
import typing

import pytest
import torch
import torch.nn.functional as F

from harness.config.base import ConfigError, literal_options
from harness.config.model import ModelConfig
from harness.model import build_model, registry

BASE = dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, max_seq_len=16)
# Literal field → the registry table that must implement each of its values.
TABLES = {
    "mlp": registry.MLPS,
    "norm": registry.NORMS,
    "norm_position": registry.NORM_POSITIONS,
    "qk_norm": registry.QK_NORMS,
    "qk_norm_scope": registry.QK_NORM_WIDTH,
    "positions": registry.POSITIONS,
    "bias": registry.BIAS,
    "gelu_approximate": registry.GELU_APPROXIMATE,
}
# Non-Literal, non-bool switches → values worth exercising (with what else they need).
VALUE_SWITCHES = {
    "n_kv_heads": [{"n_kv_heads": 1}, {"n_kv_heads": 2}],
    "head_dim": [{"head_dim": 6}],
    "d_ff": [{"d_ff": 40}],
    "n_experts": [{"n_experts": 4, "moe_top_k": 1}, {"n_experts": 4, "moe_top_k": 2, "mlp": "gelu"}],
    "moe_top_k": [{"n_experts": 3, "moe_top_k": 3, "mlp": "geglu"}],
    "attn_softcap": [{"attn_softcap": 5.0}],
    "final_softcap": [{"final_softcap": 3.0}],
    "rope_theta": [{"rope_theta": 500.0}],
    "nope_every": [{"nope_every": 2}],
    "attn_scale": [{"attn_scale": 0.1}],
    "sliding_window": [{"sliding_window": 3}],
    "global_every": [{"sliding_window": 3, "global_every": 2}],
    "norm_eps": [{"norm_eps": 1e-3}],
    "init_std": [{"init_std": 0.05}],
    "ffn_multiple_of": [{"ffn_multiple_of": 16}],
}
SIZE_FIELDS = {"vocab_size", "d_model", "n_layers", "n_heads", "max_seq_len"}


def _hints():
    return typing.get_type_hints(ModelConfig)


def _literal_fields():
    return [name for name, hint in _hints().items() if typing.get_origin(hint) is typing.Literal]


def _bool_fields():
    return [name for name, hint in _hints().items() if hint is bool]


def _cases():
    cases = []
    for field in _literal_fields():
        for value in literal_options(ModelConfig, field):
            extra = {"qk_norm": "rmsnorm"} if field == "qk_norm_scope" else {}
            cases.append({field: value, **extra})
    for qk_norm in ("rmsnorm", "layernorm"):
        for scope in literal_options(ModelConfig, "qk_norm_scope"):
            cases.append({"qk_norm": qk_norm, "qk_norm_scope": scope, "n_kv_heads": 2})
    for field in _bool_fields():
        default = next(f.default for f in dataclasses.fields(ModelConfig) if f.name == field)
        cases.append({field: not default})
    cases += [case for cases_of_field in VALUE_SWITCHES.values() for case in cases_of_field]
    return cases


def _train_step_is_finite(cfg: ModelConfig) -> None:
    torch.manual_seed(0)
    model = build_model(cfg)
    tokens = torch.randint(0, cfg.vocab_size, (2, 9))
    logits = model(tokens[:, :-1])
    assert logits.shape == (2, 8, cfg.vocab_size)
    loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()) + 0.01 * model.aux_loss
    loss.backward()
    assert torch.isfinite(loss)
    for name, param in model.named_parameters():
        assert param.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(param.grad).all(), name


def test_every_literal_value_has_a_component():
    assert sorted(TABLES) == sorted(_literal_fields())
    for field, table in TABLES.items():
        assert set(table) == set(literal_options(ModelConfig, field)), field


def test_every_field_is_classified():
    classified = set(_literal_fields()) | set(_bool_fields()) | set(VALUE_SWITCHES) | SIZE_FIELDS
    assert classified == set(ModelConfig.field_names())


@pytest.mark.parametrize("overrides", _cases(), ids=lambda case: ",".join(f"{k}={v}" for k, v in case.items()))
def test_switch_value_trains(overrides):
    _train_step_is_finite(ModelConfig(**{**BASE, **overrides}))


def _random_config(rng: random.Random) -> ModelConfig:
    while True:
        choice = {field: rng.choice(literal_options(ModelConfig, field)) for field in _literal_fields()}
        choice |= {field: rng.random() < 0.5 for field in _bool_fields()}
        for field in rng.sample(sorted(VALUE_SWITCHES), k=3):
            choice |= rng.choice(VALUE_SWITCHES[field])
        try:
            return ModelConfig(**{**BASE, **choice})
        except ConfigError:
            continue  # e.g. nope_every without RoPE: draw again


@pytest.mark.parametrize("seed", range(30))
def test_random_combination_trains(seed):
    _train_step_is_finite(_random_config(random.Random(seed)))
