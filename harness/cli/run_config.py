"""The three configs of `harness run`: a preset or a Python config file, then `--set` overrides routed to
the one config (ModelConfig, TrainConfig or DataConfig) that has the field. Torch-free."""

from __future__ import annotations

import runpy
import sys
import traceback
from pathlib import Path
from typing import Any

from harness.cli.overrides import split_overrides
from harness.config.base import ConfigError
from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig

CONFIG_CLASSES = (ModelConfig, TrainConfig, DataConfig)


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
                raise ConfigError(f"--config {str(path)!r}: `{name}` is a {type(namespace[name]).__name__}, expected {cls.__name__}.")
            found[name] = namespace[name]
    return found


def run_python_file(path: Path, label: str) -> dict[str, Any]:
    """The file's namespace; an error inside it (syntax, a raise) becomes one ConfigError line, starting with
    `label`, with its line number (config files of `harness run`, ablation files of `harness sweep`)."""
    try:
        return runpy.run_path(str(path))
    except ConfigError:
        raise  # a config built in the file was invalid: the message already names field and value
    except SyntaxError as err:
        raise ConfigError(f"{label} line {err.lineno}: SyntaxError: {err.msg}.") from None
    except Exception as err:
        in_file = [frame for frame in traceback.extract_tb(err.__traceback__) if frame.filename == str(path)]
        where = f" line {in_file[-1].lineno}" if in_file else ""
        raise ConfigError(f"{label}{where}: {type(err).__name__}: {err}") from None


def resolve_configs(
    preset: str | None, config_file: Path | None, pairs: list[str], steps: int | None, data_source: str | None
) -> tuple[ModelConfig, TrainConfig, DataConfig]:
    """(model, train, data) from a preset or config file, `--set` overrides, and `--steps` / `--data`."""
    overrides = split_overrides(CONFIG_CLASSES, pairs)
    for option, cls, name, value in (("--steps", TrainConfig, "steps", steps), ("--data", DataConfig, "source", data_source)):
        if value is None:
            continue
        if name in overrides[cls]:
            raise ConfigError(f"{option} and --set {name}= both set {cls.__name__}.{name}; give it once.")
        overrides[cls][name] = value
    if preset is not None:
        from harness.presets import from_name

        base = {"model": from_name(preset)}
    else:
        base = load_config_file(config_file)
    model = base["model"].replace(**overrides[ModelConfig])
    train = base.get("train", TrainConfig()).replace(**overrides[TrainConfig])
    data = base.get("data", DataConfig()).replace(**overrides[DataConfig])
    return model, train, data


def check_compatible(model: ModelConfig, train: TrainConfig) -> None:
    """Cross-config rules no single config can check alone. max_seq_len is the model's longest sequence
    whatever its positions: RoPE and NoPE would run past it, but calc (its default context) and the HF import
    (max_position_embeddings) read it as the context length, so a longer training sequence is refused rather
    than trained silently."""
    if train.seq_len > model.max_seq_len:
        limit = "has learned positions for only" if model.positions == "learned" else "takes sequences of at most"
        raise ConfigError(
            f"TrainConfig.seq_len={train.seq_len} is invalid: the model {limit} max_seq_len={model.max_seq_len} "
            f"tokens; lower seq_len or raise max_seq_len."
        )


def warn_small_tokenizer(vocab_size: int, tokenizer_vocab_size: int) -> None:
    """Say so when the corpus gave the BPE fewer tokens than `vocab_size`: the rows above it are never trained
    (the run records the real size as `tokenizer_vocab_size` in its summary)."""
    if tokenizer_vocab_size < vocab_size:
        print(
            f"harness run: warning: the tokenizer has only {tokenizer_vocab_size:,} tokens, fewer than "
            f"ModelConfig.vocab_size={vocab_size:,} (the corpus offers no more merges): {vocab_size - tokenizer_vocab_size:,} "
            f"embedding rows will never be used; --set vocab_size={tokenizer_vocab_size} fits this corpus.",
            file=sys.stderr,
        )
