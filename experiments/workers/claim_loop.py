"""A worker's claim loop: it claims cell after cell of a sweep's stored plan, in plan order, and trains each
(experiments.workers.attempt) until no cell needs work. A search's trials are asked from its studies when no plan
cell needs the worker (experiments.workers.search_loop).

A diverged cell is finished. A cell whose previous worker died resumes from its last checkpoint (or starts again
at step 0 as a new segment). A cell that raised is retried until it failed `retries + 1` times. A cell whose claim
this worker lost gets nothing more from it. SIGINT/SIGTERM stop the cell in flight at its next step with a
checkpoint (status `interrupted`) and end the loop with 128 + signal.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence, cast

import db
from experiments.plan.cell import Cell
from experiments.workers.attempt import CellTrainer, import_training
from experiments.workers.options import HEARTBEAT_EVERY, check_stale_after
from experiments.workers.polling import POLL_EVERY, poll_interval
from experiments.workers.ranks import CellRanks
from experiments.workers.search_loop import SearchLoop, SearchStep, study_runners
from harness.train.placement import SINGLE_DEVICE, Placement


class PlannedCell:
    """A plan row that becomes its `Cell` (configs validated, parameters counted: about 0.3 ms a cell) when
    more than its run id is first asked for: a worker starting on a 10,800-cell plan trains few of them."""

    def __init__(self, row: dict) -> None:
        self.run_id, self._row = row["run_id"], row
        self._cell: Cell | None = None

    def __getattr__(self, name: str):
        if self._cell is None:
            self._cell = Cell.from_plan_row(self._row)
        return getattr(self._cell, name)


class Worker:
    """The claim loop over one sweep's plan. With a multi-device `placement` it is rank 0 of every cell it trains
    and its helper processes (experiments.workers.ranks.CellRanks) train the other ranks."""

    def __init__(self, results_dir: Path, sweep: str, name: str, retries: int, stale_after: float,
                 optuna_storage: str | None = None, heartbeat_every: float = HEARTBEAT_EVERY,
                 placement: Placement = SINGLE_DEVICE, keep_checkpoints: str = "last") -> None:
        check_stale_after(stale_after, heartbeat_every)
        self.results_dir, self.retries = Path(results_dir), retries
        self.trainer = CellTrainer(results_dir, sweep, name, retries=retries, stale_after=stale_after,
                                   heartbeat_every=heartbeat_every, placement=placement,
                                   keep_checkpoints=keep_checkpoints)
        # A PlannedCell answers for the Cell it builds on first use: the loop and the trainer see a Cell.
        self.cells = [cast(Cell, PlannedCell(row)) for row in db.read_plan(results_dir, sweep).to_pylist()]
        runners = study_runners(self.results_dir, sweep, name, retries, stale_after, optuna_storage)
        self.search = SearchLoop(self.trainer, runners, self.cells)
        self._finished: set[str] = set()

    def run(self, helper_args: Sequence[str] = ()) -> int:
        """Claim and train until every cell is finished; 0, or 128 + signal when stopped by one. `helper_args`:
        the options a multi-device placement's helper processes need besides it (results, sweep, threads)."""
        import_training()  # before the first claim, not on its clock (main() has done it already)
        placement = self.trainer.placement
        if placement.distributed:
            self.trainer.ranks = CellRanks(placement, list(helper_args))
        try:
            return self._claim_loop()
        finally:
            if self.trainer.ranks is not None:
                self.trainer.ranks.close()

    def _needs_work(self, cell: Cell) -> bool:
        if cell.run_id in self._finished:
            return False
        state = db.run_state(self.results_dir, cell.run_id)
        if state.result is not None or state.failures > self.retries:
            self._finished.add(cell.run_id)
            return False
        return True

    def _claim_loop(self) -> int:
        from harness.train.interrupt import stop_on_signals, stop_requested  # Lightning: after import_training

        with stop_on_signals():
            while True:
                signum = stop_requested()
                if signum:
                    return 128 + signum
                waiting, trained, searched = 0, False, None  # waiting: cells others train (if they die, back to us)
                for cell in self.cells:
                    if not self._needs_work(cell):
                        continue
                    claim = self.trainer.claim(cell)
                    if claim is None:
                        waiting += 1
                        continue
                    if not self._needs_work(cell):  # finished between our look and our claim
                        self.trainer.let_go(cell, claim)
                        continue
                    stopped = self.trainer.train(cell, claim).stopped
                    if stopped is not None:
                        self.trainer.log(f"stopped at step {stopped.step} of cell {cell.index}")
                        return 128 + stopped.signum
                    trained = True
                    break  # back to the top: plan order, and cells freed meanwhile come first
                if not trained:
                    searched = self.search.step()
                    if searched is SearchStep.STOPPED:
                        return 128 + cast(int, self.search.stopped_by)  # set with every STOPPED step
                    trained = searched in (SearchStep.TRAINED, SearchStep.CONFIRMING)
                if not trained:
                    if not waiting and searched is not SearchStep.WAITING:
                        self.trainer.log("no cell left")
                        return 0
                    time.sleep(POLL_EVERY if searched is SearchStep.WAITING else poll_interval(waiting))
