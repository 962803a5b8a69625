"""A worker's side of a sweep's searches (`tune=`): when no plan cell needs it, the worker runs one trial of the
first study that has room, asked from the study (experiments.search.runner), trained like a cell
(experiments.workers.attempt) and told back; a done study's confirmation cells (`Ablation(confirm_seeds=N)`) join
the claim loop's cells instead, which trains them exactly like plan cells."""

from __future__ import annotations

import enum
import json
import time
from pathlib import Path

import db
from experiments.plan.cell import Cell
from experiments.search.runner import StudyRunner, StudyState, default_storage, storage
from experiments.search.study import Study
from experiments.search.trials import RETRY_OF, cell_number
from experiments.workers.attempt import AttemptEnd, CellTrainer
from experiments.workers.polling import POLL_EVERY


class SearchStep(enum.Enum):
    """What one step of the search loop did; the claim loop decides from it whether to look again, wait or end."""

    TRAINED = "trained"  # a trial was trained (or adopted: the same configs had a result) and told
    CONFIRMING = "confirming"  # a done study's confirmation cells joined the claim loop's cells
    WAITING = "waiting"  # other workers hold the rest of the trials
    STOPPED = "stopped"  # a signal stopped the trial (`SearchLoop.stopped_by`)
    IDLE = "idle"  # every study is done


def study_runners(results_dir: Path, sweep: str, worker: str, retries: int, stale_after: float,
                  optuna_storage: str | None) -> list[StudyRunner]:
    """A StudyRunner per study of the sweep (none for a plain grid)."""
    records = json.loads((db.sweep_dir(results_dir, sweep) / "sweep.json").read_text()).get("studies") or []
    if not records:
        return []
    store = storage(optuna_storage or default_storage(results_dir), retries, stale_after)
    return [StudyRunner(results_dir, sweep, Study.from_record(r), store, worker) for r in records]


class SearchLoop:
    """The studies as one worker runs them; `cells`: the claim loop's cells, which confirmation cells join."""

    def __init__(self, trainer: CellTrainer, runners: list[StudyRunner], cells: list) -> None:
        self.trainer, self.runners, self.cells = trainer, runners, cells
        self._confirming: set[int] = set()  # studies whose confirmation cells joined `cells`
        self.stopped_by: int | None = None  # the signal that stopped a trial

    def step(self) -> SearchStep:
        """Run one trial of the first study that has room, or add a done study's confirmation cells."""
        from experiments.search.pruning import PruneOnValidation  # Lightning: after import_training

        waiting = False
        for runner in self.runners:
            state = runner.state()
            if state is StudyState.DONE and runner.study.index not in self._confirming:
                self._confirming.add(runner.study.index)
                confirmations = runner.confirmations()
                if confirmations:
                    self.cells.extend(confirmations)
                    return SearchStep.CONFIRMING
            if state is not StudyState.OPEN:
                waiting = waiting or state is StudyState.BUSY
                continue
            trial = runner.ask()
            if trial is None:
                waiting = True
                continue
            number = cell_number(runner.frozen(trial))
            cell = runner.study.cell(trial.params, number, trial=number)
            runner.record(cell)
            return self._train_trial(runner, trial, cell, PruneOnValidation(trial))
        return SearchStep.WAITING if waiting else SearchStep.IDLE

    def _train_trial(self, runner: StudyRunner, trial, cell: Cell, pruning) -> SearchStep:
        """Train (or adopt, when identical configs already ran) one trial and tell the study its value."""
        trainer = self.trainer
        label = f"trial {trial.number} of {runner.study.name(trainer.sweep)} {trial.params}"
        while True:
            if db.run_state(trainer.results_dir, cell.run_id).result is not None:
                if not _finished(runner, trial):  # a trial failed as stale while we stalled is the study's past
                    runner.tell(trial, None, cell.run_id)  # these exact configs already ran: reuse the result
                return SearchStep.TRAINED
            claim = trainer.claim(cell)
            if claim is None:
                runner.heartbeat(trial)
                time.sleep(POLL_EVERY)  # the same configs are training elsewhere: wait for their result
                continue
            if db.run_state(trainer.results_dir, cell.run_id).result is not None:  # finished between look and claim
                trainer.let_go(cell, claim)
                continue
            attempt = trainer.train(cell, claim, callbacks=[pruning], also=lambda: runner.heartbeat(trial))
            if attempt.end is not AttemptEnd.LOST:
                break  # LOST: the worker that took the cell over finishes it; its result is this trial's value
        if attempt.stopped is not None:
            self.stopped_by = attempt.stopped.signum
            return SearchStep.STOPPED  # the trial stays RUNNING; its heartbeat stops, so it is failed and re-queued
        runner.tell(trial, None if attempt.outcome is None else attempt.outcome.status, cell.run_id)
        failed = attempt.end is AttemptEnd.FAILED
        if failed and db.run_state(trainer.results_dir, cell.run_id).failures <= trainer.retries:
            runner.optuna_study.enqueue_trial(trial.params, user_attrs={RETRY_OF: cell.trial})  # the same configs again
        trainer.log(f"{label}: told")
        return SearchStep.TRAINED


def _finished(runner: StudyRunner, trial) -> bool:
    """Whether the study already closed the trial (failed as stale while its worker was stalled)."""
    return runner.frozen(trial).state.is_finished()
