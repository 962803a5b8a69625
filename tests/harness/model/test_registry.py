"""Every value of every switch, read from the registry (so a newly registered value is covered without editing
this file): it builds, trains a step with finite gradients, declares the init and role its registry entry
documents and starts its tensors as declared, and the calculator's declarations and FLOPs equal the built model;
under μP it also trains, and every tensor scales as the `mup` package's shape rule says. Plus random
combinations, and a throwaway norm (Dynamic Tanh, with a non-standard init) registered here to prove that a
new component is picked up, and that each check catches its own kind of broken copy (docs/internals.md,
"Adding a switch value").
"""

import dataclasses
import math
import random
import typing

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from errors import ConfigError
from harness import calc
from harness.config.base import literal_options
from harness.config.model import RULES, ModelConfig
from harness.config.rules import default, enabling
from harness.model import build_model, registry
from harness.model.component import Component
from harness.model.spec import decoder, norms
from harness.model.spec.inits import INPUT_WEIGHT, NORM_SCALE, WEIGHT, ZEROS, Constant, Normal
from harness.model.spec.parametrization import HIDDEN, OUTPUT
from harness.model.spec.params import Param, param

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
    "sliding_window": [{"sliding_window": 3}],
    "global_every": [{"sliding_window": 3, "global_every": 2}],
    "norm_eps": [{"norm_eps": 1e-3}],
    "init_std": [{"init_std": 0.05}],
    "ffn_multiple_of": [{"ffn_multiple_of": 16}],
    "mup_base_width": [{"parametrization": "mup", "mup_base_width": 16}],
}
SIZE_FIELDS = {"vocab_size", "d_model", "n_layers", "n_heads", "max_seq_len"}


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
    for name, param in model.named_parameters():
        assert param.grad is not None, f"{name} got no gradient"
        assert torch.isfinite(param.grad).all(), name


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


CHECKS = [check_trains, check_initialization, check_calc_equals_model, check_flops_equal_model]
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
    for name, param in decoder.decoder(cfg).items():
        width_like = _width_like(param.shape, wide[name].shape)
        matrix_like = sum(width_like) == 2
        assert (param.role == HIDDEN) == matrix_like, f"{name} {param.shape} is {param.role}: width-like {width_like}"
        if param.role == OUTPUT:
            assert len(param.shape) == 2 and width_like == [False, True], f"{name} is no readout"
        init, expected = param.init, standard[name].init
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
    classified = set(_literal_fields()) | set(_bool_fields()) | set(VALUE_SWITCHES) | SIZE_FIELDS
    assert classified == set(ModelConfig.field_names())


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("overrides", cases(), ids=_case_id)
def test_every_switch_value(overrides, check):
    check(ModelConfig(**{**BASE, **overrides}))


@pytest.mark.parametrize("check", MUP_CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("overrides", cases(), ids=_case_id)
def test_every_switch_value_under_mup(overrides, check):
    """μP composes with every switch value: it trains, declares what its registry entry documents, and scales
    every tensor as the `mup` package would."""
    check(ModelConfig(**{**BASE, **overrides, **MUP}))


def _random_config(rng: random.Random) -> ModelConfig:
    while True:
        choice = {field: rng.choice(list(table)) for field, table in registry.tables().items()}
        choice |= {field: rng.random() < 0.5 for field in _bool_fields()}
        for field in rng.sample(sorted(VALUE_SWITCHES), k=3):
            choice |= rng.choice(VALUE_SWITCHES[field])
        try:
            return ModelConfig(**{**BASE, **choice})
        except ConfigError:
            continue  # e.g. nope_every without RoPE: draw again


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
@pytest.mark.parametrize("seed", range(20))
def test_random_combination(seed, check):
    check(_random_config(random.Random(seed)))


# The recipe of docs/internals.md followed once, for a norm that exists only in this test: Dynamic Tanh
# (Zhu et al. 2025), γ·tanh(α·x) + β with α a learned scalar that starts at 0.5, an init no shipped norm uses.
def dyt(cfg: ModelConfig, width: int) -> dict[str, Param]:
    """α, then γ at the identity and a zero β."""
    return {"alpha": Param((1,), Constant(0.5))} | norms.scale(cfg, width) | {"bias": Param((width,), ZEROS)}


class DynamicTanh(Component):
    def __init__(self, cfg: ModelConfig, width: int, params: dict[str, Param]) -> None:
        super().__init__()
        self.unit_offset = cfg.norm_unit_offset
        self.declare(params)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = 1 + self.weight if self.unit_offset else self.weight
        return scale * torch.tanh(self.alpha * x) + self.bias


DYT_INIT = {"alpha": Constant(0.5), "weight": NORM_SCALE, "bias": ZEROS}
THROWAWAY = "dyt_of_this_test"  # a name the product will not register (a shipped "dyt" would clash)


def _run_checks_on(value: str) -> int:
    """Run every registry check on the cases that use `value` as norm or QK-norm; how many there were."""
    picked = [case for case in cases() if value in (case.get("norm"), case.get("qk_norm"))]
    for case in picked:
        for check in CHECKS:
            check(ModelConfig(**{**BASE, **case}))
    return len(picked)


def test_a_norm_with_its_own_init_registered_in_a_test_passes_the_registry_checks():
    with registry.registered(registry.NORMS, THROWAWAY, registry.Component(dyt, DynamicTanh, init=DYT_INIT)):
        assert ModelConfig(norm=THROWAWAY).norm == THROWAWAY  # valid once registered
        assert _run_checks_on(THROWAWAY) >= 1 + len(registry.QK_NORM_WIDTH) * len(registry.QK_NORM_PLACEMENTS)
        model = build_model(ModelConfig(**BASE, norm=THROWAWAY))
        alphas = [param for name, param in model.named_parameters() if name.endswith("alpha")]
        assert len(alphas) == 2 * BASE["n_layers"] + 1 and all(p.item() == 0.5 for p in alphas)
    with pytest.raises(ConfigError, match=THROWAWAY):
        ModelConfig(norm=THROWAWAY)  # and gone afterwards


def _alpha_declared_as_one(cfg, width):
    return dyt(cfg, width) | {"alpha": Param((1,), Constant(1.0))}


def _scale_declared_like_a_weight(cfg, width):  # the bug the declarations removed: γ ~ normal(0, init_std)
    return dyt(cfg, width) | {"weight": Param((width,), WEIGHT.for_config(cfg))}


class _RefillsAlpha(DynamicTanh):  # declares α = 0.5, then starts it elsewhere
    def reset_parameters(self) -> None:
        super().reset_parameters()
        torch.nn.init.ones_(self.alpha)


class _AlphaPerChannel(DynamicTanh):  # declares a scalar α, builds one per channel
    def __init__(self, cfg, width, params):
        Component.__init__(self)
        self.alpha = torch.nn.Parameter(torch.empty(width))
        self.unit_offset = cfg.norm_unit_offset
        self.declare(params)


class _MixesChannels(DynamicTanh):  # multiplies by a (width, width) matrix its declaration charges no FLOPs for
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) @ self.mix


def _with_mixing(cfg, width):
    return dyt(cfg, width) | {"mix": param((width, width), WEIGHT, cfg)}


class _DetachesAlpha(DynamicTanh):  # α never learns
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * torch.tanh(self.alpha.detach() * x) + self.bias


@pytest.mark.parametrize("params, module, init, failure", [
    (_alpha_declared_as_one, DynamicTanh, DYT_INIT, "alpha: declared .*, documented"),
    (_scale_declared_like_a_weight, DynamicTanh, DYT_INIT, "weight: declared Normal.*, documented Constant"),
    (dyt, _RefillsAlpha, DYT_INIT, "alpha does not start as declared"),
    (dyt, _AlphaPerChannel, DYT_INIT, "calc's declarations differ from the built tensors"),
    (_with_mixing, _MixesChannels, DYT_INIT | {"mix": WEIGHT}, "calc's FLOPs .* differ from the model's"),
    (dyt, _DetachesAlpha, DYT_INIT, "alpha got no gradient"),
], ids=["alpha-misdeclared", "scale-like-a-weight", "module-ignores-declaration", "shape-differs", "flops-differ",
        "no-gradient"])
def test_the_registry_checks_catch_a_broken_copy(params, module, init, failure):
    """Each check fails for the copy of the norm that breaks what it guards."""
    with registry.registered(registry.NORMS, THROWAWAY, registry.Component(params, module, init=init)):
        with pytest.raises(AssertionError, match=failure):
            _run_checks_on(THROWAWAY)


def _mixing_declared_as_input(cfg, width):  # a (width, width) matrix documented and declared vector-like
    return dyt(cfg, width) | {"mix": param((width, width), INPUT_WEIGHT, cfg)}


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
        def __init__(self, cfg, width, params):
            super().__init__(cfg, width, params)
            self.shift = torch.nn.Parameter(torch.zeros(width))

    with registry.registered(registry.NORMS, "extranorm", registry.Component(dyt, ExtraNorm, init=DYT_INIT)):
        with pytest.raises(TypeError, match="without a declaration.*shift"):
            build_model(ModelConfig(**BASE, norm="extranorm"))
