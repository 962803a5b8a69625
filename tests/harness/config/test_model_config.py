"""ModelConfig validation as properties: invalid values raise ConfigError naming the field, valid configs
round-trip through dicts with an equal content hash, and typos get the closest valid name suggested."""

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from errors import ConfigError
from harness.config import ModelConfig
from harness.config.base import field_type, literal_options
from harness.config.model import RULES
from harness.config.rules import default
from harness.model import registry

LITERALS = ("mlp", "norm", "norm_position", "qk_norm", "qk_norm_scope", "qk_norm_placement", "positions", "rope_type",
            "bias", "gelu_approximate", "moe_aux_loss", "moe_topk_norm")
POSITIVE_INTS = ("vocab_size", "d_model", "n_layers", "n_heads", "max_seq_len", "n_experts", "ffn_multiple_of",
                 "moe_top_k", "rope_original_max_seq_len")
OPTIONAL_INTS = ("n_kv_heads", "head_dim", "d_ff", "sliding_window")
POSITIVE_FLOATS = ("norm_eps", "rope_theta", "init_std", "rope_scaling_factor", "rope_low_freq_factor",
                   "rope_high_freq_factor")
OPTIONAL_FLOATS = ("attn_softcap", "final_softcap", "attn_scale", "moe_capacity_factor")
BOOLS = ("attn_sinks", "tie_embeddings", "scaled_init", "norm_unit_offset", "scale_embeddings")

SMALL = dict(vocab_size=64, d_model=32, n_layers=2, n_heads=4)


@st.composite
def valid_configs(draw):
    n_heads = draw(st.sampled_from([1, 2, 4, 8]))
    positions = draw(st.sampled_from(literal_options(ModelConfig, "positions")))
    qk_norm = draw(st.sampled_from(literal_options(ModelConfig, "qk_norm")))
    window = draw(st.none() | st.integers(1, 64))
    n_experts = draw(st.integers(1, 8))
    fields = dict(
        vocab_size=draw(st.integers(1, 50_000)),
        d_model=n_heads * draw(st.sampled_from([2, 4, 8, 16])),
        n_layers=draw(st.integers(1, 12)),
        n_heads=n_heads,
        n_kv_heads=draw(st.sampled_from([None] + [k for k in (1, 2, 4, 8) if n_heads % k == 0])),
        d_ff=draw(st.none() | st.integers(1, 512)),
        mlp=draw(st.sampled_from(literal_options(ModelConfig, "mlp"))),
        n_experts=n_experts,
        moe_top_k=draw(st.integers(1, n_experts)) if n_experts > 1 else draw(st.integers(1, 4)),
        norm=draw(st.sampled_from(literal_options(ModelConfig, "norm"))),
        norm_position=draw(st.sampled_from(literal_options(ModelConfig, "norm_position"))),
        qk_norm=qk_norm,
        qk_norm_scope=(draw(st.sampled_from(literal_options(ModelConfig, "qk_norm_scope")))
                       if qk_norm != "none" else "head"),
        positions=positions,
        nope_every=draw(st.integers(0, 4)) if positions == "rope" else 0,
        sliding_window=window,
        global_every=draw(st.integers(0, 4)) if window is not None else 0,
        bias=draw(st.sampled_from(literal_options(ModelConfig, "bias"))),
        gelu_approximate=draw(st.sampled_from(literal_options(ModelConfig, "gelu_approximate"))),
        attn_softcap=draw(st.none() | st.floats(0.1, 100)),
        final_softcap=draw(st.none() | st.floats(0.1, 100)),
        attn_scale=draw(st.none() | st.floats(0.01, 2)),
        rope_theta=draw(st.floats(1.0, 1e6)),
        **{name: draw(st.booleans()) for name in BOOLS},
    )
    return ModelConfig(**fields)


@settings(max_examples=60, deadline=None)
@given(valid_configs())
def test_valid_configs_round_trip_with_equal_hash(cfg):
    again = ModelConfig.from_dict(cfg.to_dict())
    assert again == cfg
    assert again.content_hash() == cfg.content_hash()
    assert re.fullmatch(r"[0-9a-f]{16}", cfg.content_hash())


@settings(max_examples=60, deadline=None)
@given(valid_configs())
def test_valid_configs_are_rebuilt_from_their_defining_fields(cfg):
    """What a sweep plan stores of a config rebuilds it exactly, derived fields included."""
    assert ModelConfig.from_dict(cfg.defining_fields()) == cfg


def test_a_derived_field_equal_to_the_defaults_but_not_to_its_own_derivation_is_kept():
    gqa = ModelConfig(n_heads=8, n_kv_heads=4)  # 4 is the default's n_kv_heads; n_heads=8 alone derives 8
    assert "n_kv_heads" not in gqa.changed_fields() and gqa.defining_fields()["n_kv_heads"] == 4


def test_derived_fields_hash_like_spelled_out_ones():
    derived = ModelConfig(**SMALL)
    spelled = ModelConfig(**SMALL, n_kv_heads=4, head_dim=8, d_ff=derived.d_ff)
    assert spelled == derived and spelled.content_hash() == derived.content_hash()


def test_an_odd_derived_head_dim_says_where_it_came_from():
    with pytest.raises(ConfigError, match=r"ModelConfig\.head_dim=7 .*d_model/n_heads = 28/4"):
        ModelConfig(**{**SMALL, "d_model": 28})


def test_integer_valued_floats_hash_like_floats():
    as_ints = ModelConfig(**SMALL, rope_theta=500000, attn_softcap=50, norm_eps=1, init_std=1, attn_scale=2)
    as_floats = ModelConfig(**SMALL, rope_theta=500000.0, attn_softcap=50.0, norm_eps=1.0, init_std=1.0, attn_scale=2.0)
    assert as_ints.content_hash() == as_floats.content_hash()
    assert isinstance(as_ints.rope_theta, float)


def _not_an_option(field):
    return st.text(min_size=0, max_size=12).filter(lambda text: text not in literal_options(ModelConfig, field))


def _bad_int(minimum):
    return st.integers(max_value=minimum - 1) | st.floats(allow_nan=False).map(lambda v: v + 0.5) | st.booleans()


INVALID = st.one_of(
    *[st.tuples(st.just(field), _not_an_option(field)) for field in LITERALS],
    *[st.tuples(st.just(field), _bad_int(1)) for field in POSITIVE_INTS + OPTIONAL_INTS],
    *[st.tuples(st.just(field), _bad_int(0)) for field in ("nope_every", "global_every")],
    *[
        st.tuples(st.just(field),
                  st.floats(max_value=0) | st.just(float("inf")) | st.just(float("nan")) | st.text(max_size=3))
        for field in POSITIVE_FLOATS + OPTIONAL_FLOATS
    ],
    *[st.tuples(st.just(field), st.sampled_from([0, 1, "yes", None])) for field in BOOLS],
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(INVALID)
def test_invalid_field_raises_naming_the_field(field_and_value):
    field, value = field_and_value
    with pytest.raises(ConfigError, match=rf"ModelConfig\.{field}="):
        ModelConfig(**{**SMALL, field: value})


@settings(max_examples=60, deadline=None)
@given(n_heads=st.integers(1, 16), n_kv_heads=st.integers(1, 16))
def test_kv_heads_must_divide_heads(n_heads, n_kv_heads):
    assume(n_heads % n_kv_heads != 0)
    with pytest.raises(ConfigError, match=r"ModelConfig\.n_kv_heads=.*valid: 1"):
        ModelConfig(vocab_size=8, d_model=16 * n_heads, n_heads=n_heads, n_kv_heads=n_kv_heads)


@pytest.mark.parametrize("changes, field", [
    ({"head_dim": 7}, "head_dim"),  # odd head_dim cannot be rotated
    ({"d_model": 30, "n_heads": 4}, "n_heads"),
    ({"moe_top_k": 3, "n_experts": 2}, "moe_top_k"),
    ({"positions": "learned", "nope_every": 2}, "nope_every"),
    ({"global_every": 2}, "global_every"),
    ({"qk_norm_scope": "full"}, "qk_norm_scope"),
    ({"qk_norm_placement": "irope"}, "qk_norm_placement"),  # no QK-norm to place
    ({"qk_norm_placement": "irope", "qk_norm": "rmsnorm", "positions": "nope"}, "qk_norm_placement"),
    ({"rope_type": "llama3", "positions": "learned"}, "rope_type"),
    ({"rope_scaling_factor": 4.0}, "rope_scaling_factor"),  # llama3's parameters need rope_type='llama3'
    ({"rope_type": "llama3", "rope_high_freq_factor": 1.0}, "rope_high_freq_factor"),  # must exceed low
    ({"moe_capacity_factor": 1.25}, "moe_capacity_factor"),  # MoE fields on a dense model
    ({"moe_aux_loss": "switch"}, "moe_aux_loss"),
    ({"moe_topk_norm": "none"}, "moe_topk_norm"),
])
def test_cross_field_rules_name_the_field(changes, field):
    with pytest.raises(ConfigError, match=rf"ModelConfig\.{field}="):
        ModelConfig(**{**SMALL, **changes})


def _other_value(field):
    """A valid value of `field` other than its default: another registered option, the other bool, default + 2
    for an int, twice the default (or 1.0 for None) for a float."""
    value, (kind, _) = default(ModelConfig, field), field_type(ModelConfig, field)
    if field in registry.tables():
        return next(option for option in registry.options(field) if option != value)
    if kind is bool:
        return not value
    if kind is int:
        return (value or 0) + 2
    return 1.0 if value is None else 2 * value


def _disabling(setting, value):
    """A value of `setting` under which a field it enables no longer applies: its default, or another value
    where the default is the enabling one."""
    return default(ModelConfig, setting) if default(ModelConfig, setting) != value else _other_value(setting)


@pytest.mark.parametrize("rule", [rule for rule in RULES if rule.enabled_by], ids=lambda rule: rule.field)
def test_a_field_that_only_applies_beside_another_needs_it(rule):
    """Every `only_when` row of the rules table: the field may leave its default where its enabling setting
    holds, and is refused, by name, as soon as any part of that setting is taken away."""
    value = _other_value(rule.field)
    assert getattr(ModelConfig(**{**SMALL, **rule.enabled_by, rule.field: value}), rule.field) == value
    for setting, enabling_value in rule.enabled_by.items():
        disabled = {**rule.enabled_by, setting: _disabling(setting, enabling_value)}
        with pytest.raises(ConfigError, match=rf"ModelConfig\.{rule.field}="):
            ModelConfig(**{**SMALL, **disabled, rule.field: value})


def test_a_message_about_qk_norm_names_every_registered_norm():
    with pytest.raises(ConfigError, match=r"qk_norm_scope='full' .*qk_norm is set") as error:
        ModelConfig(**SMALL, qk_norm_scope="full")
    assert all(repr(norm) in str(error.value) for norm in registry.NORMS)


@settings(max_examples=100, deadline=None)
@given(field=st.sampled_from(LITERALS), data=st.data())
def test_a_one_letter_typo_suggests_a_valid_option(field, data):
    option = data.draw(st.sampled_from(literal_options(ModelConfig, field)))
    assume(len(option) >= 4)
    cut = data.draw(st.integers(0, len(option) - 1))
    typo = option[:cut] + option[cut + 1 :]
    assume(typo not in literal_options(ModelConfig, field))
    with pytest.raises(ConfigError, match=r"Did you mean '[^']+'\?") as error:
        ModelConfig(**{**SMALL, field: typo})
    suggested = re.search(r"Did you mean '([^']+)'", str(error.value)).group(1)
    assert suggested in literal_options(ModelConfig, field)


@pytest.mark.parametrize("field, typo, expected", [
    ("norm", "rmsnrom", "rmsnorm"), ("mlp", "swigluu", "swiglu"), ("norm_position", "sandwhich", "sandwich"),
    ("positions", "roep", "rope"), ("qk_norm", "layer_norm", "layernorm"),
])
def test_typo_suggests_the_closest_option(field, typo, expected):
    with pytest.raises(ConfigError, match=f"Did you mean '{expected}'"):
        ModelConfig(**{**SMALL, field: typo})


def test_unknown_field_name_suggests_the_closest_field():
    with pytest.raises(ConfigError, match="did you mean 'n_kv_heads'"):
        ModelConfig.from_dict({**SMALL, "n_kv_head": 2})


def test_replace_rederives_fields_that_were_derived_and_keeps_explicit_ones():
    derived = ModelConfig(d_model=64, n_heads=4, mlp="gelu")
    wider = derived.replace(d_model=128)
    assert (wider.head_dim, wider.d_ff, wider.n_kv_heads) == (32, 512, 4)
    assert wider == ModelConfig(d_model=128, n_heads=4, mlp="gelu")
    assert derived.replace(n_heads=8).n_kv_heads == 8  # MHA stays MHA
    explicit = ModelConfig(d_model=64, n_heads=4, n_kv_heads=2, head_dim=32, d_ff=100)
    kept = explicit.replace(d_model=128)
    assert (kept.head_dim, kept.d_ff, kept.n_kv_heads) == (32, 100, 2)


def test_typos_in_another_case_still_get_a_suggestion():
    with pytest.raises(ConfigError, match="Did you mean 'swiglu'"):
        ModelConfig(mlp="SwiGLU")
