"""Where a run's checkpoints live (`<results>/checkpoints/<run_id>/`) and which one a resume starts from.

Lightning's checkpoint holds the model, AdamW and LR-schedule state, the loops' step counters and the
callbacks' state (spike windows, first loss); the data position is the step itself, since the batch of
micro-step i is a pure function of (seed, i).
"""

from __future__ import annotations

from pathlib import Path

LAST = "last.ckpt"
TOKENIZER = "tokenizer.json"  # the run's tokenizer, copied beside its checkpoints


def checkpoint_dir(results_dir: Path, run_id: str) -> Path:
    """The run's checkpoint directory (also holds its tokenizer)."""
    return Path(results_dir) / "checkpoints" / run_id


def last_checkpoint(results_dir: Path, run_id: str) -> Path | None:
    """The run's newest checkpoint, or None when it has none."""
    path = checkpoint_dir(results_dir, run_id) / LAST
    return path if path.exists() else None


def _load(path: Path) -> dict:
    import torch  # here, so the CLI can check a run's checkpoints before paying for torch

    return torch.load(path, map_location="cpu", weights_only=False, mmap=True)


def checkpoint_step(path: Path) -> int:
    """The optimizer step a checkpoint was taken at."""
    return int(_load(path)["global_step"])


def checkpoint_configs(path: Path) -> dict[str, dict]:
    """The configs the checkpointed run was built from: {"model": ModelConfig dict, "train": TrainConfig dict}."""
    from harness.train.lit import CONFIGS_KEY

    return _load(path)[CONFIGS_KEY]
