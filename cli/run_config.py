"""The configs of `harness run`: a preset or a Python config file, then `--set` overrides, `--steps` and
`--data`, all through `RunConfigs`. Torch-free."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

from errors import ConfigError
from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.python_file import run_python_file
from harness.config.run_configs import RunConfigs, field_owners, parse_overrides
from harness.config.train import TrainConfig


def load_config_file(path: Path) -> dict[str, Any]:
    """Run a Python config file; it must define `model` (ModelConfig) and may define `train` and `data`."""
    if not path.is_file():
        raise ConfigError(f"--config {str(path)!r}: no such file.")
    namespace = run_python_file(path, f"--config {str(path)!r}")
    expected = {"model": ModelConfig, "train": TrainConfig, "data": DataConfig}
    if "model" not in namespace:
        raise ConfigError(f"--config {str(path)!r} defines no `model`; set model = ModelConfig(...) (or a preset).")
    found = {}
    for name, cls in expected.items():
        if name in namespace:
            if not isinstance(namespace[name], cls):
                raise ConfigError(f"--config {str(path)!r}: `{name}` is a {type(namespace[name]).__name__}, expected "
                                  f"{cls.__name__}.")
            found[name] = namespace[name]
    return found


def resolve_configs(preset: str | None, config_file: Path | None, pairs: list[str], steps: int | None,
                    data_source: str | None) -> RunConfigs:
    """The run's configs from a preset or config file, `--set` overrides, and `--steps` / `--data`."""
    overrides = parse_overrides(pairs)
    for option, name, value in (("--steps", "steps", steps), ("--data", "source", data_source)):
        if value is None:
            continue
        if name in overrides:
            raise ConfigError(f"{option} and --set {name}= both set {field_owners()[name].__name__}.{name}; give it "
                              "once.")
        overrides[name] = value
    # argparse requires one of --preset and --config, so without a preset the file is given.
    base: dict[str, Any] = {"model": preset} if preset is not None else load_config_file(cast(Path, config_file))
    return RunConfigs.of(base["model"], train=base.get("train"), data=base.get("data"), overrides=overrides)


def warn_small_tokenizer(vocab_size: int, tokenizer_vocab_size: int) -> None:
    """Say so when the corpus gave the BPE fewer tokens than `vocab_size`: the rows above it are never trained
    (the run records the real size as `tokenizer_vocab_size` in its summary)."""
    if tokenizer_vocab_size < vocab_size:
        print(
            f"harness run: warning: the tokenizer has only {tokenizer_vocab_size:,} tokens, fewer than "
            f"ModelConfig.vocab_size={vocab_size:,} (the corpus offers no more merges): "
            f"{vocab_size - tokenizer_vocab_size:,} embedding rows will never be used; --set "
            f"vocab_size={tokenizer_vocab_size} fits this corpus.",
            file=sys.stderr,
        )
