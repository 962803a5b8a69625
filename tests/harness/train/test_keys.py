"""Stored run keys stay: `tests/fixtures/run_keys.json` holds the keys that the code before effective-config
hashing (commit 72d9559) gave every cell of every library ablation's default sweep, every preset and configs
that set each field a component reads; they must come out the same. A config that sets a field none of its
components reads now has the key of the same config without it (it used to make a run of its own)."""

import json
import pathlib

import pytest

from harness.config import DataConfig, ModelConfig, TrainConfig
from harness.train.keys import run_key

FIXTURE = json.loads((pathlib.Path(__file__).parents[2] / "fixtures" / "run_keys.json").read_text())


@pytest.mark.parametrize("name", sorted(FIXTURE["kept"]))
def test_a_stored_key_stays(name):
    stored = FIXTURE["kept"][name]
    configs = ModelConfig(**stored["model"]), TrainConfig(**stored["train"]), DataConfig(**stored["data"])
    assert run_key(*configs) == stored["key"]


@pytest.mark.parametrize("name", sorted(FIXTURE["dropped"]))
def test_a_field_no_component_reads_is_the_run_without_it(name):
    stored = FIXTURE["dropped"][name]
    key = run_key(ModelConfig(**stored["model"]), TrainConfig(), DataConfig())
    assert key == stored["same_as"] != stored["key_before"]
