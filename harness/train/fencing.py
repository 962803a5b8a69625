"""Fencing: what a run writes is written only while its writer still holds the cell (docs/internals.md,
"Fencing and final results").

A sweep worker hands `train_run` a `Fence` for the claim it holds. Before opening a segment, writing a
checkpoint, re-pointing `last.ckpt`, removing an old checkpoint and closing the segment, the run calls
`fence.check(what)`, which raises `FenceLost` once the claim was taken over or the run has a result from
another writer; between those writes `fence.lost()` (a flag the worker's heartbeat keeps, no I/O) stops the
run at its next step. `harness run` and users' scripts write outside the claim protocol: `UNFENCED`.
"""

from __future__ import annotations

from typing import Protocol

from lightning.pytorch import Callback

from harness.train.distributed import agree_max


class FenceLost(BaseException):
    """The writer no longer holds its cell: it must write nothing more into the run. A BaseException, like
    KeyboardInterrupt, so no `except Exception` in a callback or in Lightning's loops swallows it."""


class Fence(Protocol):
    """What a run asks of its writer's claim."""

    @property
    def generation(self) -> int | None:
        """The claim generation every segment and checkpoint carries; None: no claim."""

    def check(self, what: str) -> None:
        """Raise FenceLost (naming `what` was about to be written) unless the claim is still held and the run
        has no result."""

    def lost(self) -> bool:
        """Whether the claim is known to be lost already (cheap: no I/O)."""


class _Unfenced:
    generation: int | None = None

    def check(self, what: str) -> None:
        pass

    def lost(self) -> bool:
        return False


UNFENCED: Fence = _Unfenced()


class StopWhenFenced(Callback):
    """Ends the run at the first finished step after the claim is known lost, writing nothing for that step."""

    def __init__(self, fence: Fence) -> None:
        self.fence = fence

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if agree_max(trainer, int(self.fence.lost())):  # rank 0 holds the claim; every process of the run stops
            raise FenceLost(f"claim {self.fence.generation} lost at step {trainer.global_step}")
