import pytest

from errors import ConfigError
from harness.config import DataConfig, ModelConfig, TrainConfig


def test_defaults_are_valid_and_round_trip():
    cfg = DataConfig()
    assert cfg.source == "default"
    assert DataConfig.from_dict(cfg.to_dict()) == cfg
    assert cfg.replace(max_chars=1000).content_hash() != cfg.content_hash()


def test_field_names_are_unique_across_the_three_configs():
    names = [*ModelConfig.field_names(), *TrainConfig.field_names(), *DataConfig.field_names()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("source", "", "must be a non-empty string"),
        ("text_field", "  ", "must be a non-empty string"),
        ("split", None, "must be a non-empty string"),
        ("val_tokens", 0, "must be an integer ≥ 1"),
        ("max_chars", -5, "must be an integer ≥ 1 or None"),
        ("tokenizer_train_chars", 1.5, "must be an integer ≥ 1"),
        ("cache_dir", "", "must be a directory path or None"),
    ],
)
def test_bad_values_name_field_and_value(field, value, message):
    with pytest.raises(ConfigError, match=rf"DataConfig\.{field}={value!r} is invalid: {message}"):
        DataConfig(**{field: value})


def test_cache_location_does_not_change_the_content_hash():
    cfg = DataConfig(source="corpus.txt")
    assert cfg.replace(cache_dir="/scratch/cache").content_hash() == cfg.content_hash()
    assert cfg.replace(val_tokens=1024).content_hash() != cfg.content_hash()
