"""TrainConfig validation: bad values fail at construction with a message naming field and fix."""

import pytest

from errors import ConfigError
from harness.config import TrainConfig


def test_defaults_round_trip_and_hash_is_stable():
    config = TrainConfig()
    assert TrainConfig.from_dict(config.to_dict()) == config
    assert TrainConfig().content_hash() == config.content_hash()
    assert config.replace(lr=2e-3).content_hash() != config.content_hash()


@pytest.mark.parametrize("lr", [0, -1e-3, float("inf")])
def test_non_positive_or_infinite_lr_is_rejected(lr):
    with pytest.raises(ConfigError, match="TrainConfig.lr"):
        TrainConfig(lr=lr)


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"schedule": "cosin"}, "schedule"),
        ({"wd_mode": "decoupled"}, "wd_mode"),
        ({"precision": "fp16"}, "precision"),
        ({"min_lr": 1e-2}, "min_lr"),
        ({"adam_beta2": 1.0}, "adam_beta2"),
        ({"divergence_factor": 1.0}, "divergence_factor"),
        ({"steps": 0}, "steps"),
        ({"grad_clip": 0.0}, "grad_clip"),
        ({"compile": "yes"}, "compile"),
        ({"weight_decay": float("inf")}, "weight_decay"),
        ({"z_loss": float("inf")}, "z_loss"),
        ({"adam_eps": float("inf")}, "adam_eps"),
        ({"moe_aux_coef": float("inf")}, "moe_aux_coef"),
    ],
)
def test_invalid_fields_name_themselves(changes, field):
    with pytest.raises(ConfigError, match=f"TrainConfig.{field}"):
        TrainConfig(**changes)


def test_choice_error_suggests_closest_option():
    with pytest.raises(ConfigError, match="Did you mean 'cosine'"):
        TrainConfig(schedule="cosin")


def test_tokens_per_step_counts_accumulated_micro_batches():
    assert TrainConfig(batch_size=4, seq_len=32, grad_accum=3).tokens_per_step == 4 * 32 * 3


def test_integer_and_float_spellings_of_a_float_field_share_a_run_key():
    assert TrainConfig(weight_decay=0).content_hash() == TrainConfig(weight_decay=0.0).content_hash()
    assert TrainConfig(lr=1).to_dict()["lr"] == 1.0 and isinstance(TrainConfig(lr=1).to_dict()["lr"], float)


def test_a_coupled_sized_decay_in_independent_mode_is_refused_with_the_reason():
    with pytest.raises(ConfigError, match=r"weight_decay=0\.1 .*per-step decay"):
        TrainConfig(wd_mode="independent")  # default λ = 0.1 would shrink weights 10% a step
    assert TrainConfig(wd_mode="independent", weight_decay=1e-4).weight_decay == 1e-4



@pytest.mark.parametrize("steps, warmup", [(50, 100), (10, 15), (4, 4), (100, 99), (100, 10), (2, 0)])
def test_a_warmup_that_misses_the_peak_is_warned_about_by_what_the_schedule_does(steps, warmup):
    from harness.train.optim import lr_multiplier

    cfg = TrainConfig(steps=steps, warmup_steps=warmup, schedule="cosine")
    multipliers = [lr_multiplier(step, cfg) for step in range(steps)]  # the schedule the run trains with
    warning = cfg.short_warmup_warning()
    assert (warning is None) == (1.0 in multipliers[:-1])  # silent exactly when the peak comes before the end
    if warning is None:
        return
    assert warning.startswith(f"warmup_steps={warmup} ≥ steps={steps}: the LR ")
    assert "cosine decay never starts" in warning
    if max(multipliers) < 1.0:
        assert f"never reaches its peak lr (at most {max(multipliers):.0%} of it)" in warning
    else:
        assert "reaches its peak lr only at the last step" in warning
    suggested = int(warning.split("--set warmup_steps=")[1].rstrip(").").strip())
    assert TrainConfig(steps=steps, warmup_steps=suggested).short_warmup_warning() is None
