"""Every value of every switch, read from the registry (so a newly registered value is covered without editing
this file): it builds, trains a step with finite gradients, initializes as documented, and the calculator's
declarations equal the built model. Plus random combinations, and a throwaway norm registered here to prove
that a new component is picked up (docs/internals.md, "Adding a switch value").
"""

import dataclasses
import math
import random
import typing

import pytest
import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from harness import calc
from harness.config.base import ConfigError, literal_options
from harness.config.model import ModelConfig
from harness.model import build_model, registry
from harness.model.norms import RMSNorm
from harness.model.spec import decoder, norms
from harness.model.spec.params import Init, Param, weight_init

BASE = dict(vocab_size=61, d_model=32, n_layers=2, n_heads=4, max_seq_len=16)
MOE = {"n_experts": 4, "moe_top_k": 2}
# A Literal field's value may need another switch to mean anything.
REQUIRES = {
    "qk_norm_scope": {"qk_norm": "rmsnorm"},
    "qk_norm_placement": {"qk_norm": "rmsnorm", "nope_every": 2},
    "moe_aux_loss": MOE,
    "moe_topk_norm": MOE,
}
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
            found.append({**REQUIRES.get(field, {}), field: value})
    for qk_norm in registry.NORMS:
        for scope in registry.QK_NORM_WIDTH:
            for placement in registry.QK_NORM_PLACEMENTS:
                found.append({"qk_norm": qk_norm, "qk_norm_scope": scope, "qk_norm_placement": placement,
                              "n_kv_heads": 2, "nope_every": 2})
    for field in _bool_fields():
        default = next(f.default for f in dataclasses.fields(ModelConfig) if f.name == field)
        found.append({field: not default})
    return found + [case for cases_of_field in VALUE_SWITCHES.values() for case in cases_of_field]


def _case_id(case: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in case.items())


def documented_init(name: str, cfg: ModelConfig) -> Init:
    """docs/model.md's rule, by the parameter names of docs/internals.md: biases 0; norm scales 1 (0 with
    norm_unit_offset); output projections normal(init_std) × 1/sqrt(2·n_layers) with scaled_init; every other
    weight, embedding and sink logit normal(init_std)."""
    module = name.rpartition(".")[0].rpartition(".")[2]  # the owning module's own name
    if name.endswith(".bias"):
        return Init("zeros")
    if module.endswith("norm") or module.startswith("norm_"):  # final_norm, q_norm, k_norm, norm_{attn,mlp}_*
        return Init("zeros" if cfg.norm_unit_offset else "ones")
    if name.endswith(("attn.o_proj.weight", "mlp.down_proj.weight", "mlp.experts.down_proj")):
        return Init("normal", cfg.init_std, 1 / math.sqrt(2 * cfg.n_layers) if cfg.scaled_init else 1.0)
    return Init("normal", cfg.init_std)


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


def check_initialization(cfg: ModelConfig) -> None:
    """Every declared init is the documented one, and every built tensor follows its declaration."""
    torch.manual_seed(0)
    declared = decoder.decoder(cfg)
    for name, tensor in build_model(cfg).named_parameters():
        init = declared[name].init
        assert init == documented_init(name, cfg), f"{name}: declared {init}, documented {documented_init(name, cfg)}"
        if init.kind != "normal":
            assert torch.equal(tensor, torch.full_like(tensor, 1.0 if init.kind == "ones" else 0.0)), name
        elif tensor.numel() >= 256:
            std = init.std * init.scale
            assert abs(tensor.mean().item()) < 4 * std / math.sqrt(tensor.numel()), name
            assert abs(tensor.std().item() / std - 1) < 0.2, f"{name}: std {tensor.std().item()} vs {std}"
        else:  # too few draws for a std estimate: distinct values inside ±6σ
            assert tensor.unique().numel() > 1 and tensor.abs().max() < 6 * init.std * init.scale, name


def check_calc_equals_model(cfg: ModelConfig) -> None:
    """calc's declarations name exactly the built tensors, with their shapes; its counts follow."""
    with torch.device("meta"):
        model = build_model(cfg)
    built = {name: tuple(param.shape) for name, param in model.named_parameters()}
    assert {name: param.shape for name, param in decoder.decoder(cfg).items()} == built
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
    assert 3 * counter.get_total_flops() == calc.kernel_flops_per_token(cfg, seq) * batch * seq


CHECKS = [check_trains, check_initialization, check_calc_equals_model, check_flops_equal_model]


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


# The recipe of docs/internals.md followed once, for a norm that exists only in this test: x / mean|x| · γ.
class AbsNorm(RMSNorm):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / (x.abs().mean(-1, keepdim=True) + self.eps) * self.scale()


def _run_checks_on(value: str) -> int:
    """Run every registry check on the cases that use `value` as norm or QK-norm; how many there were."""
    picked = [case for case in cases() if value in (case.get("norm"), case.get("qk_norm"))]
    for case in picked:
        for check in CHECKS:
            check(ModelConfig(**{**BASE, **case}))
    return len(picked)


def test_a_norm_registered_in_a_test_is_covered_by_the_registry_checks():
    with registry.registered(registry.NORMS, "absnorm", registry.Component(norms.scale, AbsNorm)):
        assert ModelConfig(norm="absnorm").norm == "absnorm"  # valid once registered
        assert _run_checks_on("absnorm") >= 1 + len(registry.QK_NORM_WIDTH) * len(registry.QK_NORM_PLACEMENTS)
    with pytest.raises(ConfigError, match="absnorm"):
        ModelConfig(norm="absnorm")  # and gone afterwards


def test_the_registry_checks_catch_a_norm_whose_scale_is_initialized_like_a_weight():
    """The bug this design removes: a new norm's γ drawn as normal(0, init_std) with the suite green."""
    def misdeclared(cfg, width):
        return {"weight": Param((width,), weight_init(cfg))}

    with registry.registered(registry.NORMS, "absnorm", registry.Component(misdeclared, AbsNorm)):
        with pytest.raises(AssertionError, match="documented"):
            _run_checks_on("absnorm")


def test_a_parameter_without_declaration_is_refused():
    class ExtraNorm(AbsNorm):
        def __init__(self, cfg, width, params):
            super().__init__(cfg, width, params)
            self.shift = torch.nn.Parameter(torch.zeros(width))

    with registry.registered(registry.NORMS, "extranorm", registry.Component(norms.scale, ExtraNorm)):
        with pytest.raises(TypeError, match="without a declaration.*shift"):
            build_model(ModelConfig(**BASE, norm="extranorm"))
