"""One worker's attempt at a cell: the claim (a claim taken over fences the earlier generations at once), then
training under the claim's heartbeat and fence, and how it ended, an `Attempt`: trained (the run's outcome:
completed, diverged, pruned, or interrupted by a signal with a checkpoint), failed (it raised: stored as a failed
segment with its traceback, and retried until it failed `retries + 1` times) or lost (the worker stalled past
`--stale-after` and another took the cell over: nothing more is written, not even a failure record; one line in
the log says so and the worker goes on with the next cell).

torch and Lightning are imported inside the functions that train, never when this module is imported: a worker
imports them once, through `import_training` (harness.train.lightning_import), before anything else pulls them in.
"""

from __future__ import annotations

import contextlib
import enum
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import db
from db.outcomes import SupersededError, fence_earlier_claims
from experiments.plan.cell import Cell
from experiments.workers.claims import BeatWatcher, Claim, Heartbeat, try_claim
from harness.train.checkpoints import checkpoint_step, last_checkpoint
from harness.train.placement import Placement

if TYPE_CHECKING:
    from experiments.workers.ranks import CellRanks
    from harness.train.run import RunInterrupted, RunOutcome


def import_training(threads: int | None = None) -> None:
    """torch, Lightning (without what only torchmetrics would use: harness.train.lightning_import) and the
    training code: the seconds a worker spends before it can train."""
    from harness.train.lightning_import import import_lightning

    import_lightning()
    import harness.train.run  # noqa: F401

    if threads:
        import torch

        torch.set_num_threads(threads)


class AttemptEnd(enum.Enum):
    """How an attempt at a claimed cell ended for the worker that made it."""

    TRAINED = "trained"  # train_run returned: `Attempt.outcome` says how (a signal's stop included)
    FAILED = "failed"  # it raised: a failed segment holds its traceback (written now, or by the run's writer)
    LOST = "lost"  # the claim was lost: nothing more written; the worker that took the cell over finishes it


@dataclass(frozen=True)
class Attempt:
    end: AttemptEnd
    outcome: RunOutcome | None = None  # TRAINED only

    @property
    def stopped(self) -> RunInterrupted | None:
        """The signal's stop that interrupted the run (its checkpoint's step and the signal), or None."""
        return None if self.outcome is None else self.outcome.interrupted


class _StepReporter:
    """A Lightning logger that only tells the heartbeat which step the cell is at (built lazily: Lightning)."""

    @staticmethod
    def make(heartbeat: Heartbeat):
        from lightning.pytorch.loggers import Logger

        class StepReporter(Logger):
            name = "heartbeat"
            version = "0"

            def log_metrics(self, metrics, step=None) -> None:
                heartbeat.step = step

            def log_hyperparams(self, *args, **kwargs) -> None:
                pass

        return StepReporter()


class CellTrainer:
    """Claims and trains cells of one sweep as worker `name`. With a multi-device `placement` the worker is rank 0
    of every cell it trains and `ranks` (experiments.workers.ranks.CellRanks, set by the worker) are its helpers."""

    def __init__(self, results_dir: Path, sweep: str, name: str, *, retries: int, stale_after: float,
                 heartbeat_every: float, placement: Placement, keep_checkpoints: str) -> None:
        self.results_dir, self.sweep, self.name = Path(results_dir), sweep, name
        self.retries, self.heartbeat_every = retries, heartbeat_every
        self.placement, self.keep_checkpoints = placement, keep_checkpoints
        self.ranks: CellRanks | None = None
        self.watcher = BeatWatcher(stale_after)
        self._prepared: dict[tuple[str, int], object] = {}

    def log(self, message: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {self.name}: {message}", flush=True)

    def claim(self, cell: Cell) -> Claim | None:
        """Claim the cell; a claim taken over fences the earlier generations in the store at once, so a stalled
        holder's status is refused from now on (db/outcomes.py), not only once this worker opens its segment."""
        claim = try_claim(self.results_dir, cell.run_id, worker=self.name, sweep=self.sweep, watcher=self.watcher)
        if claim is not None and claim.generation > 0:
            fence_earlier_claims(self.results_dir, cell.run_id, claim.generation)
        return claim

    def let_go(self, cell: Cell, claim: Claim) -> None:
        """Release a claim on a cell that has a result already; a claim taken over while this worker stalled
        between claiming and looking again is lost, and said so like any other."""
        if not claim.release():
            self._lost(cell, f"claim {claim.generation} was taken over")

    def train(self, cell: Cell, claim: Claim, callbacks=(), also=None) -> Attempt:
        """Train the claimed cell; `callbacks` join the trainer's, `also` runs with every heartbeat."""
        from experiments.workers.fence import ClaimFence
        from harness.train.fencing import FenceLost
        from harness.train.run import RunSpec, check_run_inputs, train_run

        with Heartbeat(claim, self.heartbeat_every, cell.train.steps, also) as heartbeat:
            fence = ClaimFence(self.results_dir, claim, heartbeat, self.retries)
            state = db.run_state(self.results_dir, cell.run_id)
            spec = RunSpec(cell.model, cell.train, cell.data, self.results_dir, cell.run_id, resume=state.exists,
                           sweep=self.sweep, arm=cell.arm, keep_checkpoints=self.keep_checkpoints)
            how = "resuming" if state.exists else "starting"
            self.log(f"{how} {cell.label} ({cell.run_id}, claim {claim.generation})")
            try:
                prepared = self._data(cell)
                check_run_inputs(prepared, cell.train, self.placement)
                with self._cell_ranks(cell, state.exists):
                    outcome = train_run(spec, prepared, extra_loggers=[_StepReporter.make(heartbeat)], progress=False,
                                        extra_callbacks=callbacks, fence=fence, placement=self.placement)
            except FenceLost as lost:
                return self._lost(cell, lost)
            except Exception as error:  # a crash of this cell is data about the infrastructure: store it, retry
                return self._record_failure(cell, state, error, fence)
        self.log(f"{cell.label}: {outcome.status} ({fence.checks} fence checks, {1000 * fence.seconds:.1f} ms)")
        return Attempt(AttemptEnd.TRAINED, outcome)

    def _data(self, cell: Cell):
        from harness.data import prepare

        key = (cell.data.content_hash(), cell.model.vocab_size)
        if key not in self._prepared:
            self._prepared[key] = prepare(cell.data, cell.model.vocab_size)
        return self._prepared[key]

    def _cell_ranks(self, cell: Cell, resume: bool):
        """The helper processes joined for this cell (a multi-device placement), else nothing to hold."""
        if self.ranks is None:
            return contextlib.nullcontext()
        return self.ranks.cell(cell.plan_row(), resume, self.log)

    def _lost(self, cell: Cell, lost: BaseException | str) -> Attempt:
        self.log(f"{cell.label}: lost the cell to another worker, {lost}; going on with the next cell")
        return Attempt(AttemptEnd.LOST)

    def _record_failure(self, cell: Cell, before: db.RunState, error: Exception, fence) -> Attempt:
        """Make sure the attempt counts as a failed segment with its traceback, even when it raised before the
        run's writer opened (bad data, a device error at set-up); LOST (nothing recorded) without the claim."""
        from harness.train.fencing import FenceLost

        text = traceback.format_exc()
        self.log(f"{cell.label} raised {type(error).__name__}: {error}\n{text}")
        after = db.run_state(self.results_dir, cell.run_id)
        if after.failures > before.failures:
            return Attempt(AttemptEnd.FAILED)
        ckpt = last_checkpoint(self.results_dir, cell.run_id)
        start = checkpoint_step(ckpt) + 1 if ckpt is not None else 0
        try:
            fence.check("record a failure")
            writer = db.RunWriter.open(self.results_dir, cell.run_id, sweep=self.sweep, arm=cell.arm, seed=cell.seed,
                                       resume=True, resume_from_step=start, claim=fence.generation)
            writer.close("failed", summary={"error": f"{type(error).__name__}: {error}", "traceback": text})
        except (FenceLost, SupersededError) as lost:
            return self._lost(cell, lost)
        return Attempt(AttemptEnd.FAILED)
