"""Load a trained run back: its model (from the last checkpoint) and the tokenizer it was trained with.

Without Lightning (a checkpoint is a plain dict), so `harness sample` starts in about 2 s instead of 8.
"""

from __future__ import annotations

from pathlib import Path

from tokenizers import Tokenizer

from errors import ConfigError
from harness.config.model import ModelConfig
from harness.model import Transformer, build_model
from harness.train.checkpoints import CONFIGS_KEY, TOKENIZER, checkpoint_dir, load_checkpoint, run_checkpoint

MODEL_PREFIX = "model."  # LitLM keeps the Transformer as `self.model`


def load_trained(results_dir: Path, run_id: str) -> tuple[Transformer, Tokenizer]:
    """The run's model at its final checkpoint (its result's, else the newest; eval mode, CPU) and its
    tokenizer; ConfigError if absent."""
    path = run_checkpoint(results_dir, run_id)
    if path is None:
        if (checkpoint_dir(results_dir, run_id) / TOKENIZER).exists():
            raise ConfigError(f"run {run_id!r} kept no checkpoint (trained with --keep-checkpoints none): there are no "
                              "weights to load.")
        raise ConfigError(f"run {run_id!r} has no checkpoint in {checkpoint_dir(results_dir, run_id)}; check the run "
                          "id and --results.")
    checkpoint = load_checkpoint(path)
    model = build_model(ModelConfig.from_dict(checkpoint[CONFIGS_KEY]["model"]))
    state = {k.removeprefix(MODEL_PREFIX): v for k, v in checkpoint["state_dict"].items() if k.startswith(MODEL_PREFIX)}
    model.load_state_dict(state)
    tokenizer = Tokenizer.from_file(str(checkpoint_dir(results_dir, run_id) / TOKENIZER))
    return model.eval(), tokenizer
