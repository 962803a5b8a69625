"""Checks of `harness run` about the run id, made before any data is prepared or model built."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from errors import ConfigError
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig


def check_valid_run_id(run_id: str, option: str = "--run-id") -> None:
    """A run id names directories in the store: it must be a plain name (no path separators, no '..')."""
    import db
    from db.paths import check_run_id

    try:
        check_run_id(run_id)
    except db.DbError as err:
        raise ConfigError(f"{option}: {err}") from None


def check_results_dir(results_dir: Path, create: bool = True) -> None:
    """The results store must be a directory this process can write, not a file or a path under one; with `create`
    (a launch that will write) a probe file must be creatable where it is or will be made (cli/out_path.py)."""
    from cli.out_path import check_writable_folder

    if results_dir.exists() and not results_dir.is_dir():
        raise ConfigError(f"--results {str(results_dir)!r} is a file, not a directory; give a directory (created if "
                          "missing).")
    existing = next(p for p in (results_dir, *results_dir.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise ConfigError(f"--results {str(results_dir)!r} cannot be created: {str(existing)!r} is a file, not a "
                          "directory.")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"--results {str(results_dir)!r}: {str(existing)!r} is not writable by this user; give a "
                          "directory you can write.")
    if create:
        check_writable_folder(results_dir, f"--results {str(results_dir)!r}")


def check_run_id_free(results_dir: Path, run_id: str,
                      rerun_changed: bool = False) -> Callable[[], list[Path]] | None:
    """A fresh run must not reuse the id of one already in the store (its key is the configs' hash), unless its
    result was made by other code and `rerun_changed` asks to retrain it: then the archiving to do before training
    (cli/rerun_changed.py) is returned; None when the id is free."""
    from cli.rerun_changed import archive, changed_results, made_by
    from db.paths import run_dir

    check_valid_run_id(run_id)
    changed = changed_results(results_dir, [run_id])  # after completing an archiving a crash interrupted
    if not run_dir(results_dir, run_id).exists():
        return None
    if changed and rerun_changed:
        return lambda: archive(results_dir, changed)
    other = (f" Its result was made by other code ({made_by(changed)}): --rerun-changed archives it and trains it "
             "again." if changed else "")
    raise ConfigError(
        f"run {run_id!r} already exists in {results_dir}: pass --resume to continue it, --run-id NEW to train "
        f"the same configs again, or --results DIR for another store.{other}"
    )


def check_resumable(results_dir: Path, run_id: str, model: ModelConfig, train: TrainConfig) -> None:
    """`--resume` needs a run that has not finished (completed or diverged) and, when it has a checkpoint,
    one trained with these same configs. A run with no checkpoint yet starts again from step 0."""
    import db
    from db.paths import run_dir
    from harness.train.checkpoints import checkpoint_configs, last_checkpoint

    check_valid_run_id(run_id)
    if not run_dir(results_dir, run_id).exists():
        raise ConfigError(f"--resume: no run {run_id!r} in {results_dir}; check --results / --run-id or the --set "
                          "values.")
    row = db.connect(results_dir).execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if row is not None and row[0] in ("completed", "diverged"):
        raise ConfigError(f"--resume: run {run_id!r} already ended ({row[0]}); nothing to continue.")
    checkpoint = last_checkpoint(results_dir, run_id)
    if checkpoint is None:
        return
    stored = checkpoint_configs(checkpoint)
    changed = [
        f"{name}={stored[key].get(name)!r}→{value!r}"
        for key, cfg in (("model", model), ("train", train))
        for name, value in cfg.to_dict().items()
        if stored[key].get(name) != value
    ]
    if changed:
        raise ConfigError(
            f"--resume: run {run_id!r} was trained with other configs ({', '.join(changed)}); resume with the "
            f"original --set values, or start a new run with --run-id NEW."
        )
