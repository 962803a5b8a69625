"""Every value of every switch, read from the registry (so a newly registered value is covered without editing
this file): it builds, trains a step with finite gradients, declares the init and role its registry entry
documents and starts its tensors as declared, the calculator's declarations and FLOPs equal the built model,
every norm applies `norm_unit_offset` (against a copy with γ shifted by one, and a model at init that outputs
no zeros), cached decoding equals the full forward, and a field that no component of the config declares it
reads changes neither the model nor the run key while every other field changes the key; under μP it also
trains, and every tensor scales as the `mup` package's shape rule says. The same checks run on configurations
generated from the tables in which every two settings of any two switches meet (all pairs the rules allow).
Plus a throwaway norm (Dynamic Tanh, with a non-standard init) registered here to prove that a new component
is picked up, and that each check catches its own kind of broken copy (docs/internals.md, "Adding a switch
value"), and stored run keys computed by the rule they were stored under.
"""

import dataclasses
import hashlib
import json
import math
import typing

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from errors import ConfigError
from harness import calc
from harness.config import DataConfig, TrainConfig
from harness.config.base import literal_options
from harness.config.model import RULES, ModelConfig
from harness.config.rules import default, enabling
from harness.model import KVCache, build_model, registry
from harness.model.component import Component
from harness.model.spec import decoder, norms
from harness.model.spec.inits import INPUT_WEIGHT, NORM_SCALE, WEIGHT, ZEROS, Constant, Normal
from harness.model.spec.parametrization import HIDDEN, OUTPUT
from harness.model.spec.params import Param, param
from harness.presets import PRESETS
from harness.train.keys import run_key

BASE = dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, max_seq_len=16)
MOE = {"n_experts": 4, "moe_top_k": 2}
# Non-Literal, non-bool switches → values worth exercising (with what else they need).
VALUE_SWITCHES = {
    "n_kv_heads": [{"n_kv_heads": 1}, {"n_kv_heads": 2}],
    "head_dim": [{"head_dim": 6}],
    "d_ff": [{"d_ff": 40}],
    "n_experts": [{"n_experts": 4, "moe_top_k": 1}, {"n_experts": 4, "moe_top_k": 2, "mlp": "gelu"}],
    "moe_top_k": [{"n_experts": 3, "moe_top_k": 3, "mlp": "geglu"}],
    "moe_capacity_factor": [{**MOE, "moe_capacity_factor": 1.0},
                            {"n_experts": 3, "moe_top_k": 1, "moe_capacity_factor": 0.5}],
    "attn_softcap": [{"attn_softcap": 5.0}],
    "final_softcap": [{"final_softcap": 3.0}],
    "rope_theta": [{"rope_theta": 500.0}],
    "rope_local_theta": [{"sliding_window": 3, "global_every": 2, "rope_local_theta": 50.0}],
    "rope_scaling_factor": [{"rope_type": "llama3", "rope_scaling_factor": 4.0, "rope_original_max_seq_len": 8}],
    "rope_low_freq_factor": [{"rope_type": "llama3", "rope_low_freq_factor": 2.0, "rope_original_max_seq_len": 8}],
    "rope_high_freq_factor": [{"rope_type": "llama3", "rope_high_freq_factor": 8.0}],
    "rope_original_max_seq_len": [{"rope_type": "llama3", "rope_original_max_seq_len": 4}],
    "nope_every": [{"nope_every": 2}],
    "attn_scale": [{"attn_scale": 0.1}],
    "sliding_window": [{"sliding_window": 3}, {"sliding_window": 1, "global_every": 2}],
    "global_every": [{"sliding_window": 3, "global_every": 2}],
    "norm_eps": [{"norm_eps": 1e-3}],
    "init_std": [{"init_std": 0.05}],
    "ffn_multiple_of": [{"ffn_multiple_of": 16}],
    "mup_base_width": [{"parametrization": "mup", "mup_base_width": 16}],
}
SIZE_FIELDS = {"vocab_size": [67], "d_model": [48], "n_layers": [3], "n_heads": [2], "max_seq_len": [24]}


def _hints():
    return typing.get_type_hints(ModelConfig)


def _literal_fields():
    return [name for name, hint in _hints().items() if typing.get_origin(hint) is typing.Literal]


def _bool_fields():
    return [name for name, hint in _hints().items() if hint is bool]


def cases() -> list[dict]:
    """One config per registered value of every switch (read now, so values registered later count), plus
    QK-norm kinds × scopes × placements, every non-default bool and the VALUE_SWITCHES."""
    found = []
    for field, table in registry.tables().items():
        for value in table:
            # A value other than the default comes with what the field needs to leave it (μP needs its base width).
            needs = enabling(RULES, field) if value != default(ModelConfig, field) else {}
            found.append({**needs, field: value})
    for qk_norm in registry.NORMS:
        for scope in registry.QK_NORM_WIDTH:
            for placement in registry.QK_NORM_PLACEMENTS:
                found.append({"qk_norm": qk_norm, "qk_norm_scope": scope, "qk_norm_placement": placement,
                              "n_kv_heads": 2, "nope_every": 2})
    for field in _bool_fields():
        found.append({field: not default(ModelConfig, field)})
    return found + [case for cases_of_field in VALUE_SWITCHES.values() for case in cases_of_field]


def _case_id(case: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in case.items())


def check_trains(cfg: ModelConfig) -> None:
    """A forward and backward pass: logits of the right shape, finite loss, a finite gradient everywhere."""
    torch.manual_seed(0)
    model = build_model(cfg)
    tokens = torch.randint(0, cfg.vocab_size, (2, 9))
    logits = model(tokens[:, :-1])
    assert logits.shape == (2, 8, cfg.vocab_size)
    loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()) + 0.01 * model.aux_loss
    loss.backward()
    assert torch.isfinite(loss)
    for name, weight in model.named_parameters():
        assert weight.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(weight.grad).all(), name


def _starts_constant(tensor: torch.Tensor, init: Constant) -> bool:
    return torch.equal(tensor, torch.full_like(tensor, init.value))


def _starts_normal(tensor: torch.Tensor, init: Normal) -> bool:
    """normal(0, std·multiplier): mean and std within sampling error, or, with too few draws for a std
    estimate, distinct values inside ±6σ."""
    std = init.std * init.multiplier
    if tensor.numel() < 256:
        return tensor.unique().numel() > 1 and tensor.abs().max().item() < 6 * std
    mean_ok = abs(tensor.mean().item()) < 4 * std / math.sqrt(tensor.numel())
    return mean_ok and abs(tensor.std().item() / std - 1) < 0.2


# Init kind → whether a tensor holds what that kind draws (a new kind gets its check here).
STARTS = {Constant: _starts_constant, Normal: _starts_normal}


def check_initialization(cfg: ModelConfig) -> None:
    """Every tensor's declared init and role are the ones its registry entry documents, and the built tensor
    holds that init."""
    torch.manual_seed(0)
    declared, documented = decoder.decoder(cfg), decoder.decoder(cfg, decoder.documented)
    for name, tensor in build_model(cfg).named_parameters():
        init, role = declared[name].init, declared[name].role
        assert (init, role) == (documented[name].init, documented[name].role), (
            f"{name}: declared {init} as {role}, documented {documented[name].init} as {documented[name].role}")
        assert type(init) in STARTS, f"{name}: no check for init kind {type(init).__name__} in STARTS"
        assert STARTS[type(init)](tensor.detach(), init), f"{name} does not start as declared: {init}"


def check_calc_equals_model(cfg: ModelConfig) -> None:
    """calc's declarations name exactly the built tensors, with their shapes; its counts follow."""
    with torch.device("meta"):
        model = build_model(cfg)
    built = {name: tuple(param.shape) for name, param in model.named_parameters()}
    declared = {name: param.shape for name, param in decoder.decoder(cfg).items()}
    assert declared == built, "calc's declarations differ from the built tensors"
    assert calc.params(cfg) == sum(p.numel() for p in model.parameters())
    assert calc.per_layer_params(cfg) == [sum(p.numel() for p in layer.parameters()) for layer in model.layers]


def check_flops_equal_model(cfg: ModelConfig) -> None:
    """calc's kernel FLOPs are what the built model's matmuls cost: a forward is a third of calc's forward +
    backward figure. Attention runs on the eager path here (it agrees with SDPA, test_attention.py), whose
    matmuls FlopCounterMode sees; it does not see SDPA's CPU kernel. A capacity factor's slotted dispatch
    computes every slot (docs/calc.md) where calc charges the top-k experts, so such a config is checked
    without it: the rest of its arm is still counted against the model."""
    cfg = cfg.replace(moe_capacity_factor=None)
    batch, seq = 2, 8
    model = build_model(cfg)
    for layer in model.layers:
        layer.attn.path = "eager"
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        model(torch.randint(0, cfg.vocab_size, (batch, seq)))
    model_flops, calc_flops = 3 * counter.get_total_flops(), calc.kernel_flops_per_token(cfg, seq) * batch * seq
    assert model_flops == calc_flops, f"calc's FLOPs ({calc_flops}) differ from the model's ({model_flops})"


def _unit_offset_pair(entry: registry.Component, cfg: ModelConfig, width: int):
    """The norm built with norm_unit_offset and random tensors, and a copy without the offset whose every γ (the
    tensors its entry documents as NORM_SCALE) is shifted by one: the written-out meaning of applying w as 1 + w."""
    torch.manual_seed(0)
    offset = entry.build(cfg.replace(norm_unit_offset=True), 0, width)
    plain = entry.build(cfg.replace(norm_unit_offset=False), 0, width)
    with torch.no_grad():
        for name, tensor in offset.named_parameters():
            tensor.normal_()
            shift = 1.0 if entry.init[name] == NORM_SCALE else 0.0
            plain.get_parameter(name).copy_(tensor + shift)
    return offset, plain


def check_unit_offset(cfg: ModelConfig) -> None:
    """Every norm the config uses, under norm_unit_offset, computes what the same norm computes without it with
    each γ shifted by one; and the whole model with norm_unit_offset, at init (every γ stored as 0), does not
    output zeros (a norm that ignores the offset multiplies by its zero γ)."""
    width = cfg.d_model
    for kind in {cfg.norm, cfg.qk_norm} - {"none"}:
        offset, plain = _unit_offset_pair(registry.NORMS[kind], cfg, width)
        x = torch.randn(3, width)
        torch.testing.assert_close(offset(x), plain(x), msg=lambda text: f"{kind} ignores norm_unit_offset: {text}")
    torch.manual_seed(0)
    logits = build_model(cfg.replace(norm_unit_offset=True))(torch.randint(0, cfg.vocab_size, (2, 8)))
    assert logits.abs().amax() > 0, "with norm_unit_offset the model outputs zeros at init"


def check_cached_decoding(cfg: ModelConfig) -> None:
    """A prompt, then one token per step, then a chunk through a KVCache give the full forward's logits (away
    from init, so masks, windows and caps matter). Without a capacity factor: capacity is per forward pass, so a
    one-token step drops differently by design (docs/model.md)."""
    cfg = cfg.replace(moe_capacity_factor=None)
    torch.manual_seed(0)
    model = build_model(cfg).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.1)
        tokens = torch.randint(0, cfg.vocab_size, (2, 12))
        full = model(tokens)  # (B, T, V)
        cache = KVCache()
        pieces = [model(tokens[:, :5], cache)]
        pieces += [model(tokens[:, t : t + 1], cache) for t in range(5, 9)]
        pieces.append(model(tokens[:, 9:], cache))
    assert cache.seq_len == 12
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, rtol=1e-4, atol=1e-5,
                               msg=lambda text: f"cached decoding differs from the full forward: {text}")


def _examples(field: str) -> list:
    """Values worth setting `field` to: every option of a switch, both bools, the VALUE_SWITCHES' and sizes'."""
    tables = registry.tables()
    if field in tables:
        return list(tables[field])
    if field in _bool_fields():
        return [True, False]
    return [case[field] for case in VALUE_SWITCHES.get(field, [])] + SIZE_FIELDS.get(field, [])


def _seeded_model(cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """What a model of `cfg` is: its tensors after `manual_seed(0)` and its logits on fixed tokens."""
    torch.manual_seed(0)
    model = build_model(cfg)
    tokens = torch.randint(0, cfg.vocab_size, (2, 8), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        return {**model.state_dict(), "logits": model(tokens)}


def _same_model(seeded: dict[str, torch.Tensor], other: ModelConfig) -> bool:
    """Whether a model of `other` has the same seeded tensors and logits."""
    again = _seeded_model(other)
    return again.keys() == seeded.keys() and all(torch.equal(again[name], seeded[name]) for name in seeded)


def check_fields_read(cfg: ModelConfig) -> None:
    """Each field set alone to another value the rules allow: one that no component of the config declares it
    reads leaves the run key and the model (seeded tensors, logits) as they are, so the declaration is true;
    every other field makes another run key."""
    unread, train, data = decoder.unread_fields(cfg), TrainConfig(), DataConfig()
    key, seeded = run_key(cfg, train, data), None
    for field in ModelConfig.field_names():
        for value in _examples(field):
            try:
                changed = cfg.replace(**{field: value})
            except ConfigError:
                continue  # a rule keeps it at its value here
            if changed == cfg:
                continue
            if field in unread:
                assert run_key(changed, train, data) == key, f"{field}={value!r} is unread but changes the run key"
                seeded = seeded or _seeded_model(cfg)
                assert _same_model(seeded, changed), f"{field}={value!r} changes the model, which declares it unread"
            else:
                assert run_key(changed, train, data) != key, f"{field}={value!r} is read but keeps the run key"


CHECKS = [check_trains, check_initialization, check_calc_equals_model, check_flops_equal_model, check_unit_offset,
          check_cached_decoding, check_fields_read]
MUP = {"parametrization": "mup", "mup_base_width": BASE["d_model"] // 2}  # width multiplier m = 2


def _widened(cfg: ModelConfig) -> ModelConfig:
    """`cfg` twice as wide: every width-like size doubled (d_model, head_dim, d_ff), every count kept."""
    return cfg.replace(d_model=2 * cfg.d_model, head_dim=2 * cfg.head_dim, d_ff=2 * cfg.d_ff)


def _width_like(narrow: tuple[int, ...], wide: tuple[int, ...]) -> list[bool]:
    """Which dimensions of a tensor grow with the model's width (`mup.set_base_shapes` compares two widths)."""
    return [a != b for a, b in zip(narrow, wide)]


def check_mup_scaling(cfg: ModelConfig) -> None:
    """Against the `mup` package's rules, read off shapes at two widths: a tensor with two width-like dimensions
    is matrix-like (hidden): its init std is the standard one × m^-½ (`mup.init`) and its Adam LR × 1/m
    (`MuAdam`); any other tensor starts and trains as under the standard parametrization; an output tensor is a
    readout, a matrix whose fan-in (its last dimension) is its only width-like one (`MuReadout`)."""
    m = cfg.d_model / cfg.mup_base_width
    standard = decoder.decoder(cfg.replace(parametrization="standard", mup_base_width=None))
    wide, factors = decoder.decoder(_widened(cfg)), decoder.lr_multipliers(cfg)
    for name, declared in decoder.decoder(cfg).items():
        width_like = _width_like(declared.shape, wide[name].shape)
        matrix_like = sum(width_like) == 2
        assert (declared.role == HIDDEN) == matrix_like, (f"{name} {declared.shape} is {declared.role}: width-like "
                                                          f"{width_like}")
        if declared.role == OUTPUT:
            assert len(declared.shape) == 2 and width_like == [False, True], f"{name} is no readout"
        init, expected = declared.init, standard[name].init
        if matrix_like:
            expected = dataclasses.replace(expected, multiplier=pytest.approx(expected.multiplier * m**-0.5))
        assert init == expected, f"{name}: starts as {init} under μP, expected {expected}"
        assert factors[name] == pytest.approx(1 / m if matrix_like else 1.0), f"{name}: LR factor {factors[name]}"


MUP_CHECKS = [check_trains, check_initialization, check_mup_scaling]


def test_every_literal_value_has_a_component():
    assert sorted(registry.tables()) == sorted(_literal_fields())
    for field, table in registry.tables().items():
        assert set(table) == set(literal_options(ModelConfig, field)), field


def test_every_field_is_classified():
    classified = set(_literal_fields()) | set(_bool_fields()) | set(VALUE_SWITCHES) | set(SIZE_FIELDS)
    assert classified == set(ModelConfig.field_names())


@pytest.mark.slow
@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("overrides", cases(), ids=_case_id)
def test_every_switch_value(overrides, check):
    check(ModelConfig(**{**BASE, **overrides}))


@pytest.mark.slow
@pytest.mark.parametrize("check", MUP_CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("overrides", cases(), ids=_case_id)
def test_every_switch_value_under_mup(overrides, check):
    """μP composes with every switch value: it trains, declares what its registry entry documents, and scales
    every tensor as the `mup` package would."""
    check(ModelConfig(**{**BASE, **overrides, **MUP}))


def _factors() -> dict[str, list[dict]]:
    """Each component switch → the settings it takes: every registered value of a table field (read now, so a
    value registered later is a setting too), both values of a bool, and a window and experts or none."""
    factors = {field: [{field: value} for value in table] for field, table in registry.tables().items()}
    factors |= {field: [{field: False}, {field: True}] for field in _bool_fields()}
    return factors | {"sliding_window": [{}, {"sliding_window": 3, "global_every": 2}],
                      "n_experts": [{}, {"n_experts": 3, "moe_top_k": 2}]}


def _holds(cfg: ModelConfig, factors: dict[str, list[dict]], field: str) -> int:
    """Which of the field's settings `cfg` has (a value switch left alone: none of its settings)."""
    values = cfg.to_dict()
    held = [i for i, setting in enumerate(factors[field]) if setting and setting.items() <= values.items()]
    return held[0] if held else 0


def _pairs(cfg: ModelConfig, factors: dict[str, list[dict]]) -> set[tuple]:
    held = sorted((field, _holds(cfg, factors, field)) for field in factors)
    return {(a, b) for i, a in enumerate(held) for b in held[i + 1:]}


def _realize(choice: dict[str, int], factors: dict[str, list[dict]]) -> ModelConfig | None:
    """The config that holds the chosen setting of each switch in `choice` (the rest at BASE and the defaults),
    with what a setting needs to leave its default (RULES' enabling settings), or None when the rules refuse
    the combination."""
    chosen = {key: value for field, i in choice.items() for key, value in factors[field][i].items()}
    needs = {}
    for field, value in chosen.items():
        if value != default(ModelConfig, field):
            needs |= enabling(RULES, field)
    for overrides in ({**needs, **chosen}, {**chosen, **needs}):
        try:
            cfg = ModelConfig(**{**BASE, **overrides})
        except ConfigError:
            continue
        if all(_holds(cfg, factors, field) == i for field, i in choice.items()):
            return cfg
    return None


def pairwise_configs() -> list[ModelConfig]:
    """Configs in which every two settings of any two switches meet at least once when the rules allow them
    together (all-pairs coverage, built greedily from the registry tables: a value registered later is paired
    with every other setting without an edit here). Each config starts from an uncovered pair and adds, switch
    by switch, the setting that covers the most new pairs among those the rules allow beside what it holds."""
    factors = _factors()
    fields = sorted(factors)
    uncovered = {((a, i), (b, j)) for n, a in enumerate(fields) for b in fields[n + 1:]
                 for i in range(len(factors[a])) for j in range(len(factors[b]))}
    configs = []
    while uncovered:
        target = min(uncovered)
        choice, cfg = dict(target), _realize(dict(target), factors)
        if cfg is None:
            uncovered.discard(target)  # the rules never allow the two together
            continue
        for field in fields:
            if field in choice:
                continue
            gain = {i: sum(tuple(sorted(((field, i), pick))) in uncovered for pick in choice.items())
                    for i in range(len(factors[field]))}
            for i in sorted(gain, key=gain.get, reverse=True):
                extended = _realize(choice | {field: i}, factors)
                if extended is not None:
                    choice, cfg = choice | {field: i}, extended
                    break
        uncovered -= _pairs(cfg, factors)
        configs.append(cfg)
    return configs


PAIRWISE = pairwise_configs()


@pytest.mark.slow
@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("index", range(len(PAIRWISE)))
def test_every_pair_of_settings(index, check):
    check(PAIRWISE[index])


def test_pairwise_configs_pair_every_two_settings_the_rules_allow():
    """Against brute force over every two switches: each pair of settings that a config the rules allow holds
    (the pair, what it needs, the rest at BASE and the defaults) meets in one of the configs."""
    factors = _factors()
    met = set().union(*(_pairs(cfg, factors) for cfg in PAIRWISE))
    fields = sorted(factors)
    possible = [((a, i), (b, j)) for n, a in enumerate(fields) for b in fields[n + 1:]
                for i in range(len(factors[a])) for j in range(len(factors[b]))
                if _realize({a: i, b: j}, factors) is not None]
    assert possible and not [pair for pair in possible if pair not in met]


# The recipe of docs/internals.md followed once, for a norm that exists only in this test: Dynamic Tanh
# (Zhu et al. 2025), γ·tanh(α·x) + β with α a learned scalar that starts at 0.5, an init no shipped norm uses.
def dyt(cfg: ModelConfig, layer: int | None, width: int) -> dict[str, Param]:
    """α, then γ at the identity and a zero β."""
    return {"alpha": Param((1,), Constant(0.5))} | norms.scale(cfg, width) | {"bias": Param((width,), ZEROS)}


class DynamicTanh(Component):
    def __init__(self, cfg: ModelConfig, layer: int | None, width: int, params: dict[str, Param]) -> None:
        super().__init__()
        self.unit_offset = cfg.norm_unit_offset
        self.declare(params)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1 + self.weight if self.unit_offset else self.weight
        return scale * torch.tanh(self.alpha * x) + self.bias


DYT_INIT = {"alpha": Constant(0.5), "weight": NORM_SCALE, "bias": ZEROS}
DYT_READS = ("norm_unit_offset",)  # no ε: norm_eps means nothing to it
THROWAWAY = "dyt_of_this_test"  # a name the product will not register (a shipped "dyt" would clash)


def _run_checks_on(value: str) -> int:
    """Run every registry check on the cases that use `value` as norm or QK-norm; how many there were."""
    picked = [case for case in cases() if value in (case.get("norm"), case.get("qk_norm"))]
    for case in picked:
        for check in CHECKS:
            check(ModelConfig(**{**BASE, **case}))
    return len(picked)


@pytest.mark.slow
def test_a_norm_with_its_own_init_registered_in_a_test_passes_the_registry_checks():
    dyt_entry = registry.Component(dyt, DynamicTanh, init=DYT_INIT, reads=DYT_READS)
    with registry.registered(registry.NORMS, THROWAWAY, dyt_entry):
        assert ModelConfig(norm=THROWAWAY).norm == THROWAWAY  # valid once registered
        assert _run_checks_on(THROWAWAY) >= 1 + len(registry.QK_NORM_WIDTH) * len(registry.QK_NORM_PLACEMENTS)
        model = build_model(ModelConfig(**BASE, norm=THROWAWAY))
        alphas = [param for name, param in model.named_parameters() if name.endswith("alpha")]
        assert len(alphas) == 2 * BASE["n_layers"] + 1 and all(p.item() == 0.5 for p in alphas)
    with pytest.raises(ConfigError, match=THROWAWAY):
        ModelConfig(norm=THROWAWAY)  # and gone afterwards


def _dyt_shifted_after_the_first_layer(cfg, layer, width):  # β only in blocks 1, 2, … (not 0, not the final norm)
    params = dyt(cfg, layer, width)
    return params if layer else {name: spec for name, spec in params.items() if name != "bias"}


class _DynamicTanhMaybeShifted(DynamicTanh):
    def __init__(self, cfg, layer, width, params):
        super().__init__(cfg, layer, width, params)
        if "bias" not in params:
            self.register_parameter("bias", None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1 + self.weight if self.unit_offset else self.weight
        shifted = scale * torch.tanh(self.alpha * x)
        return shifted if self.bias is None else shifted + self.bias


def test_a_declaration_receives_its_layer():
    """A norm whose declaration gives blocks after the first a β: the built model and calc both have it exactly
    there (every norm of block 0 and the final norm without), and the registry checks pass on it."""
    entry = registry.Component(_dyt_shifted_after_the_first_layer, _DynamicTanhMaybeShifted, init=DYT_INIT,
                               reads=DYT_READS)
    with registry.registered(registry.NORMS, THROWAWAY, entry):
        cfg = ModelConfig(**{**BASE, "n_layers": 3}, norm=THROWAWAY)
        biases = {name for name, _ in build_model(cfg).named_parameters() if name.endswith("norm_attn_in.bias")}
        assert biases == {"layers.1.norm_attn_in.bias", "layers.2.norm_attn_in.bias"}
        assert "final_norm.bias" not in decoder.decoder(cfg)
        width = cfg.d_model * 2  # both block norms of a pre-norm block
        assert calc.per_layer_params(cfg)[1] - calc.per_layer_params(cfg)[0] == width
        for check in CHECKS:
            check(cfg)


def _alpha_declared_as_one(cfg, layer, width):
    return dyt(cfg, layer, width) | {"alpha": Param((1,), Constant(1.0))}


def _scale_declared_like_a_weight(cfg, layer, width):  # the bug the declarations removed: γ ~ normal(0, init_std)
    return dyt(cfg, layer, width) | {"weight": Param((width,), WEIGHT.for_config(cfg))}


class _RefillsAlpha(DynamicTanh):  # declares α = 0.5, then starts it elsewhere
    def reset_parameters(self) -> None:
        super().reset_parameters()
        torch.nn.init.ones_(self.alpha)


class _AlphaPerChannel(DynamicTanh):  # declares a scalar α, builds one per channel
    def __init__(self, cfg, layer, width, params):
        Component.__init__(self)
        self.alpha = torch.nn.Parameter(torch.empty(width))
        self.unit_offset = cfg.norm_unit_offset
        self.declare(params)


class _MixesChannels(DynamicTanh):  # multiplies by a (width, width) matrix its declaration charges no FLOPs for
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) @ self.mix


def _with_mixing(cfg, layer, width):
    return dyt(cfg, layer, width) | {"mix": param((width, width), WEIGHT, cfg)}


class _DetachesAlpha(DynamicTanh):  # α never learns
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * torch.tanh(self.alpha.detach() * x) + self.bias


class _IgnoresUnitOffset(DynamicTanh):  # γ starts at 0 under norm_unit_offset, as documented, and is applied as w
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * torch.tanh(self.alpha * x) + self.bias


class _ReadsEpsUndeclared(DynamicTanh):  # reads norm_eps, which its entry does not declare
    def __init__(self, cfg, layer, width, params):
        super().__init__(cfg, layer, width, params)
        self.eps = cfg.norm_eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) + self.eps


@pytest.mark.parametrize("params, module, init, failure", [
    (_alpha_declared_as_one, DynamicTanh, DYT_INIT, "alpha: declared .*, documented"),
    (_scale_declared_like_a_weight, DynamicTanh, DYT_INIT, "weight: declared Normal.*, documented Constant"),
    (dyt, _RefillsAlpha, DYT_INIT, "alpha does not start as declared"),
    (dyt, _AlphaPerChannel, DYT_INIT, "calc's declarations differ from the built tensors"),
    (_with_mixing, _MixesChannels, DYT_INIT | {"mix": WEIGHT}, "calc's FLOPs .* differ from the model's"),
    (dyt, _DetachesAlpha, DYT_INIT, "alpha got no gradient"),
    (dyt, _IgnoresUnitOffset, DYT_INIT, "ignores norm_unit_offset"),
    (dyt, _ReadsEpsUndeclared, DYT_INIT, "norm_eps=0.001 changes the model, which declares it unread"),
], ids=["alpha-misdeclared", "scale-like-a-weight", "module-ignores-declaration", "shape-differs", "flops-differ",
        "no-gradient", "ignores-unit-offset", "reads-undeclared-field"])
def test_the_registry_checks_catch_a_broken_copy(params, module, init, failure):
    """Each check fails for the copy of the norm that breaks what it guards."""
    with registry.registered(registry.NORMS, THROWAWAY, registry.Component(params, module, init=init, reads=DYT_READS)):
        with pytest.raises(AssertionError, match=failure):
            _run_checks_on(THROWAWAY)


def _mixing_declared_as_input(cfg, layer, width):  # a (width, width) matrix documented and declared vector-like
    return dyt(cfg, layer, width) | {"mix": param((width, width), INPUT_WEIGHT, cfg)}


def test_the_mup_check_catches_a_matrix_declared_in_the_wrong_role():
    """Declaration and documentation agree, so only the shape rule can tell that μP leaves this matrix unscaled."""
    broken = registry.Component(_mixing_declared_as_input, _MixesChannels, init=DYT_INIT | {"mix": INPUT_WEIGHT})
    with registry.registered(registry.NORMS, THROWAWAY, broken):
        cfg = ModelConfig(**BASE, **MUP, norm=THROWAWAY)
        check_initialization(cfg)
        with pytest.raises(AssertionError, match=r"mix \(32, 32\) is input: width-like \[True, True\]"):
            check_mup_scaling(cfg)


def test_a_declared_tensor_without_a_documented_init_is_refused():
    partly_documented = registry.Component(dyt, DynamicTanh, init={"weight": NORM_SCALE})
    with registry.registered(registry.NORMS, THROWAWAY, partly_documented):
        with pytest.raises(TypeError, match="declares alpha, bias without a documented init"):
            decoder.decoder(ModelConfig(**BASE, norm=THROWAWAY), decoder.documented)


def test_a_parameter_without_declaration_is_refused():
    class ExtraNorm(DynamicTanh):
        def __init__(self, cfg, layer, width, params):
            super().__init__(cfg, layer, width, params)
            self.shift = torch.nn.Parameter(torch.zeros(width))

    with registry.registered(registry.NORMS, "extranorm", registry.Component(dyt, ExtraNorm, init=DYT_INIT)):
        with pytest.raises(TypeError, match="without a declaration.*shift"):
            build_model(ModelConfig(**BASE, norm="extranorm"))


def test_a_field_only_other_components_read_cannot_change_the_run_key():
    """norm_eps under a norm with no ε is the same run whatever its value; beside an RMSNorm QK-norm, which
    reads it, it makes another run."""
    with registry.registered(registry.NORMS, THROWAWAY, registry.Component(dyt, DynamicTanh, init=DYT_INIT,
                                                                             reads=DYT_READS)):
        cfg = ModelConfig(**BASE, norm=THROWAWAY)
        assert cfg.replace(norm_eps=1e-3).content_hash() == cfg.content_hash()
        assert cfg.replace(norm_eps=1e-3).effective() == cfg
        with_qk_norm = cfg.replace(qk_norm="rmsnorm")
        assert with_qk_norm.replace(norm_eps=1e-3).content_hash() != with_qk_norm.content_hash()


def _stored_key(cfg: ModelConfig) -> str:
    """The rule every stored model key was made with: a hash of the fields that differ from the defaults."""
    canonical = json.dumps({"type": "ModelConfig", **cfg.changed_fields()}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _at_defaults(cfg: ModelConfig, names) -> ModelConfig:
    return ModelConfig.from_dict({**cfg.to_dict(), **{name: default(ModelConfig, name) for name in names}})


KEYED = {_case_id(case): lambda case=case: ModelConfig(**{**BASE, **case}) for case in cases()}
KEYED |= {f"preset={name}": make for name, make in PRESETS.items()}


@pytest.mark.parametrize("name", KEYED)
def test_stored_keys_stay_and_unread_fields_drop_out(name):
    """A config whose unread fields are at their defaults keeps the key it was stored under (every preset and
    registered value); one that sets an unread field has the key of the same config without it."""
    cfg = KEYED[name]()
    unread = decoder.unread_fields(cfg)
    if all(getattr(cfg, name) == default(ModelConfig, name) for name in unread):
        assert cfg.content_hash() == _stored_key(cfg)
    else:
        assert cfg.content_hash() == _stored_key(_at_defaults(cfg, unread)) != _stored_key(cfg)
