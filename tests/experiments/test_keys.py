"""Run keys hash what differs from the defaults: a later version that adds a switch at its default keeps
every stored key, so no sweep is orphaned."""

import dataclasses

from harness.config import DataConfig, ModelConfig, TrainConfig
from harness.train.keys import run_key


def _with_new_field(cls, name, default):
    fields = [(name, type(default), dataclasses.field(default=default))]
    return dataclasses.make_dataclass(cls.__name__, fields, bases=(cls,), frozen=True)


def test_adding_a_switch_at_its_default_keeps_every_key():
    model, train, data = ModelConfig(qk_norm="rmsnorm", d_model=96), TrainConfig(lr=3e-3), DataConfig()
    before = run_key(model, train, data)
    NewModel = _with_new_field(ModelConfig, "attn_gate", False)
    NewTrain = _with_new_field(TrainConfig, "muon", False)
    new_model, new_train = NewModel(**model.to_dict()), NewTrain(**train.to_dict())
    assert new_model.to_dict()["attn_gate"] is False
    assert run_key(new_model, new_train, data) == before
    assert run_key(new_model.replace(attn_gate=True), new_train, data) != before  # the new switch, set, is a new run


def test_known_keys_are_pinned():
    # Stored run ids depend on this exact rule: if this fails, every stored sweep would be orphaned.
    assert run_key(ModelConfig(), TrainConfig(), DataConfig()) == "3498afbff7fb938d"
    assert run_key(ModelConfig(qk_norm="rmsnorm"), TrainConfig(lr=3e-3), DataConfig()) == "9f70bc472ffb274e"
    assert ModelConfig().changed_fields() == {} and TrainConfig(lr=1).changed_fields() == {"lr": 1.0}
