"""Where a run's checkpoints live (`<results>/checkpoints/<run_id>/`) and which one a resume starts from.

Lightning's checkpoint holds the model, AdamW and LR-schedule state, the loops' step counters and the
callbacks' state (spike windows, first loss); the data position is the step itself, since the batch of
micro-step i is a pure function of (seed, i).

Checkpoints are read with torch's weights-only unpickler: a results directory may be shared (a cluster
filesystem), and a full unpickle would run whatever code a planted file names. Lightning's checkpoints
hold only tensors and plain Python data, so nothing needs allow-listing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from errors import ConfigError

CONFIGS_KEY = "harness_configs"  # where a checkpoint keeps the configs its model and run were built from
LAST = "last.ckpt"
TOKENIZER = "tokenizer.json"  # the run's tokenizer, copied beside its checkpoints
# what a run leaves: the newest only (default); every one; none once it has a result
KEEP_CHECKPOINTS = ("last", "all", "none")


def checkpoint_dir(results_dir: Path, run_id: str) -> Path:
    """The run's checkpoint directory (also holds its tokenizer)."""
    return Path(results_dir) / "checkpoints" / run_id


def last_checkpoint(results_dir: Path, run_id: str) -> Path | None:
    """The run's newest checkpoint, or None when it has none."""
    path = checkpoint_dir(results_dir, run_id) / LAST
    return path if path.exists() else None


def run_checkpoint(results_dir: Path, run_id: str) -> Path | None:
    """The checkpoint that stands for the run: for a run with a result, the final checkpoint its result names
    (a late writer re-pointing `last.ckpt` cannot change it); otherwise the newest one."""
    import db

    named = (db.result_summary(results_dir, run_id) or {}).get("checkpoint")
    if named is not None and (checkpoint_dir(results_dir, run_id) / named).exists():
        return checkpoint_dir(results_dir, run_id) / named
    return last_checkpoint(results_dir, run_id)


def checkpoint_generation(name: str) -> tuple[int, int] | None:
    """(claim generation, step) of a sweep worker's checkpoint name `step<N>-g<generation>.ckpt`, else None."""
    match = re.fullmatch(r"step(\d+)-g(\d+)\.ckpt", name)
    return (int(match[2]), int(match[1])) if match else None


def standing_after_takeover(results_dir: Path, run_id: str, generation: int, replaced: str | None) -> str | None:
    """The checkpoint `last.ckpt` must name once claim `generation` was taken over (its writer may have re-pointed
    it after losing the claim): the result's checkpoint when the run has a result; else the newest checkpoint of
    a later generation (the live holder's); else `replaced`, what that re-point replaced (the file the live holder
    resumed from, or an older one of the run's line, from which a resume only retrains steps). None when that
    file is gone too: `last.ckpt` then names nothing, and a resume starts at step 0."""
    import db

    folder = checkpoint_dir(results_dir, run_id)
    summary = db.result_summary(results_dir, run_id)
    if summary is not None:
        candidates = [summary.get("checkpoint")]
    else:
        later = sorted((key, name) for name in os.listdir(folder)
                       if (key := checkpoint_generation(name)) is not None and key[0] > generation)
        candidates = [later[-1][1] if later else None, replaced]
    return next((name for name in candidates if name is not None and (folder / name).exists()), None)


def load_checkpoint(path: Path) -> dict:
    """A checkpoint's contents, on CPU; ConfigError (nothing unpickled) if it holds more than tensors and
    plain data, StoreDamage (a ConfigError) naming it if it is damaged: its members are read back against their
    CRC-32 first, since torch.load checks none and loads garbled tensors as they are."""
    import pickle

    import torch  # here, so the CLI can check a run's checkpoints before paying for torch

    from db.errors import StoreDamage
    from db.validate import checkpoint_problem

    problem = checkpoint_problem(path)
    if problem:
        raise StoreDamage(f"checkpoint {path} is damaged ({problem}): `harness db check --repair` moves it aside.",
                          (str(path),))
    try:
        return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except pickle.UnpicklingError:
        unsafe = ", ".join(torch.serialization.get_unsafe_globals_in_checkpoint(path)) or "objects"
        raise ConfigError(
            f"checkpoint {path} holds {unsafe}, not only tensors and plain data: refusing to load it, since "
            f"unpickling it could run code. Delete it if no harness run wrote it."
        ) from None


def checkpoint_step(path: Path) -> int:
    """The optimizer step a checkpoint was taken at."""
    return int(load_checkpoint(path)["global_step"])


def checkpoint_configs(path: Path) -> dict[str, dict]:
    """The configs the checkpointed run was built from: {"model": ModelConfig dict, "train": TrainConfig dict}."""
    return load_checkpoint(path)[CONFIGS_KEY]
