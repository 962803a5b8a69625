"""The run's checkpoints: every `checkpoint_every` steps, at a requested stop and at the end of training, each
written under the fence and named with the claim generation, so writers of two generations never share a
file; `last.ckpt` is a symlink replaced atomically. Only the newest checkpoint is kept (`keep='last'`, the
default; `'all'` keeps every one; `'none'` removes them once the run has a result, never while it can resume).

In place of Lightning's ModelCheckpoint, whose `last` link is removed and re-created (a reader in between
finds none) and which has no place for a fence check between writing a file and linking it.
"""

from __future__ import annotations

import os
from pathlib import Path

from lightning.pytorch import Callback

from db.segments import RESULTS  # the statuses that end a run: it never resumes after one
from harness.train.checkpoints import LAST, checkpoint_dir, run_checkpoint, standing_after_takeover
from harness.train.fencing import UNFENCED, Fence, FenceLost

CLAIM_KEY = "harness_claim"  # the claim generation a checkpoint was written under (None outside sweeps)


def point_last_at(ckpt_dir: Path, name: str) -> None:
    """Re-point `last.ckpt` at `name` in one rename: a reader sees the old target or the new one."""
    tmp = ckpt_dir / f".{LAST}.tmp-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    os.symlink(name, tmp)
    os.replace(tmp, ckpt_dir / LAST)


def _link_target(link: Path) -> str | None:
    """The name `link` points at, or None when there is no link."""
    try:
        return os.readlink(link)
    except OSError:
        return None


class RunCheckpoints(Callback):
    """Writes the checkpoints; `latest` is the name of the newest one this segment stands on (the one it
    resumed from until it writes its own), which a closing result names in its summary."""

    def __init__(self, results_dir: Path, run_id: str, every: int, fence: Fence = UNFENCED,
                 resumed_from: Path | None = None, keep: str = "last") -> None:
        self.results_dir, self.run_id, self.every, self.fence = Path(results_dir), run_id, every, fence
        self.keep = keep
        self.ckpt_dir = checkpoint_dir(results_dir, run_id)
        self.latest: str | None = os.path.basename(os.path.realpath(resumed_from)) if resumed_from else None
        self._saved_step: int | None = None

    def name(self, step: int) -> str:
        generation = self.fence.generation
        return f"step{step:07d}" + ("" if generation is None else f"-g{generation}") + ".ckpt"

    def save(self, trainer) -> str:
        """Write a checkpoint of the current step, point `last.ckpt` at it, remove the one it replaces."""
        step = trainer.global_step
        if step == self._saved_step and self.latest is not None:
            return self.latest  # a stop requested at a periodic checkpoint's step: that one is the stop's
        name = self.name(step)
        self.fence.check(f"checkpoint {name}")
        # Every process of a multi-device run calls it (rank 0 writes the file); optimizer and loop state: resumable.
        trainer.save_checkpoint(self.ckpt_dir / name, weights_only=False)
        if not trainer.is_global_zero:
            self.latest, self._saved_step = name, step
            return name
        self.fence.check(f"point {LAST} at {name}")
        replaced = _link_target(self.ckpt_dir / LAST)
        point_last_at(self.ckpt_dir, name)
        try:
            self.fence.check(f"keep {LAST} at {name}")
        except FenceLost:
            # Paused between the check and the rename, we may have pointed `last` at this lost generation's file:
            # give it back to the run (the result's writer also re-points it after it closes).
            self.give_last_back(replaced)
            raise
        previous, self.latest, self._saved_step = self.latest, name, step
        if previous is not None and previous != name and self.keep != "all":
            self.fence.check(f"remove {previous}")
            (self.ckpt_dir / previous).unlink(missing_ok=True)
        return name

    def give_last_back(self, replaced: str | None, tries: int = 3) -> None:
        """Point `last.ckpt` where it stands for the run after this writer's claim was taken over
        (`standing_after_takeover`), trying again should the live holder remove that file meanwhile."""
        generation = self.fence.generation
        assert generation is not None, "only a claim is taken over"
        for _ in range(tries):
            target = standing_after_takeover(self.results_dir, self.run_id, generation, replaced)
            if target is None:
                (self.ckpt_dir / LAST).unlink(missing_ok=True)
                return
            point_last_at(self.ckpt_dir, target)
            if (self.ckpt_dir / target).exists():
                return

    def point_last_at_result(self) -> None:
        """Point `last.ckpt` at the checkpoint the run's result names, if it has one."""
        named = run_checkpoint(self.results_dir, self.run_id)
        if named is not None and named.name != LAST:
            point_last_at(self.ckpt_dir, named.name)

    def settle(self, status: str) -> None:
        """After the run's result closed: point `last.ckpt` at the result's checkpoint (undoing a lost writer's
        re-pointing in between), or with keep='none' remove every checkpoint of the run (a run with a result is
        never resumed; an interrupted or failed one keeps its checkpoints whatever `keep` says)."""
        if self.keep == "none" and status in RESULTS:
            for path in self.ckpt_dir.glob("*.ckpt"):
                path.unlink(missing_ok=True)
            return
        self.point_last_at_result()

    def on_save_checkpoint(self, trainer, pl_module, checkpoint) -> None:
        checkpoint[CLAIM_KEY] = self.fence.generation

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if pl_module.finished_step_values() is not None and trainer.global_step % self.every == 0:
            self.save(trainer)

    def on_train_end(self, trainer, pl_module) -> None:
        """The final step is always checkpointed, so `harness sample` loads the model the run ended with."""
        self.save(trainer)
        for logger in trainer.loggers:
            if hasattr(logger, "checkpoint"):
                logger.checkpoint = self.latest
