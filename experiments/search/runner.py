"""Running an arm's Optuna search inside the claim loop: workers ask trials of a shared study (its storage an
SQLAlchemy URL), each trial is an ordinary run (claimed and trained like a cell, its key its configs' hash),
and its value goes back to the study.

- Optuna heartbeats: a trial whose worker was killed is failed by `fail_stale_trials` after the grace
  period, and `RetryHeartbeatStaleTrialCallback` enqueues it again with the same parameters, so its retry has the
  same configs, the same run id, and resumes the run from its checkpoint.
- A diverged trial is valued at the loss at initialization (the run's `initial_loss`, step 1's loss before any
  update), as Wortsman et al.'s LR sensitivity counts it, so the sampler learns to avoid the region; a pruned
  one is told `PRUNED`.
- Concurrent workers never run more than `trials` trials of a study: a trial asked beyond the count is
  told FAIL (tagged `surplus`) before it trains.
- Once a study is done, its completed trials are final (any later one would be surplus), so its chosen trial,
  and with `confirm_seeds` the confirmation cells that rerun it on fresh seeds, are the same for every worker.
"""

from __future__ import annotations

import enum
import hashlib
import os
import warnings
from pathlib import Path

import db
from experiments.plan.cell import Cell
from experiments.search.study import Study
from experiments.search.trials import cell_number


def storage(url: str, retries: int, stale_after: float):
    """Optuna's RDB storage at `url` with heartbeats and retries of trials whose worker died. A trial is dead
    after `stale_after` seconds without a heartbeat, the same rule as a cell's claim."""
    import optuna
    from optuna.storages import RetryHeartbeatStaleTrialCallback

    with warnings.catch_warnings():  # heartbeats are marked experimental in Optuna 5; they are what we need
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        return optuna.storages.RDBStorage(
            url, heartbeat_interval=max(1, int(stale_after // 4)), grace_period=max(2, int(stale_after)),
            heartbeat_stale_trial_callback=RetryHeartbeatStaleTrialCallback(max_retry=retries),
        )


def default_storage(results_dir: Path) -> str:
    """Optuna's storage for one machine: an SQLite file in the results directory."""
    return f"sqlite:///{Path(results_dir).resolve() / 'optuna.db'}"


def create_storage(url: str) -> None:
    """Create the storage's tables before any worker starts: workers that each create an empty SQLite storage
    at the same moment collide on Alembic's version row, and one of them fails."""
    storage(url, retries=0, stale_after=60.0).remove_session()


def open_study(study: Study, sweep: str, store, worker: str):
    """The study in its storage (created by the first worker). Each worker process seeds its sampler from the
    cell's seed, its name and its pid: with one seed for all, concurrent (or respawned) workers proposed the
    same parameters."""
    import optuna

    seed = int(hashlib.sha256(f"{study.base.seed}:{worker}:{os.getpid()}".encode()).hexdigest()[:8], 16)
    kind = optuna.samplers.TPESampler if study.sampler == "tpe" else optuna.samplers.RandomSampler
    sampler = kind(seed=seed)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=2) if study.pruner == "median" else optuna.pruners.NopPruner()
    return optuna.create_study(study_name=study.name(sweep), storage=store, sampler=sampler, pruner=pruner,
                               direction="minimize", load_if_exists=True)


def check_storage(url: str) -> None:
    """Reach the storage before any compute: a bad URL is one clear error (exit 2), not a traceback later."""
    import sqlalchemy as sa

    from errors import ConfigError

    try:
        with sa.create_engine(url).connect():
            pass
    except Exception as error:  # SQLAlchemy raises many kinds (ArgumentError, OperationalError, driver errors)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigError(f"--optuna-storage {url!r} cannot be reached: {first}") from None


# The loss at initialization: `initial_loss` at step 0; a run trained before it was recorded falls back to its
# first logged training loss (exact only with log_every=1; with sparse logging it is lower).
INITIAL_LOSS_SQL = """
SELECT value FROM metrics WHERE run_id = ? AND name IN ('initial_loss', 'train_loss')
ORDER BY name = 'initial_loss' DESC, step LIMIT 1
"""


def trial_value(results_dir: Path, run_id: str) -> tuple[str | None, float | None]:
    """(the run's status, None before it has a row; the value to tell): final val loss, or for a diverged run its
    loss at initialization."""
    con = db.connect(results_dir)  # one connection: building the views is most of a query's cost
    row = con.execute("SELECT status, final_val_loss FROM runs WHERE run_id = ?", [run_id]).fetchone()
    status, value = row if row else (None, None)
    if status == "diverged":
        first = con.execute(INITIAL_LOSS_SQL, [run_id]).fetchone()
        value = None if first is None else first[0]
    return status, value


class StudyState(enum.Enum):
    """Where a study stands for the worker that asks (`StudyRunner.state`)."""

    OPEN = "open"  # ask a trial
    BUSY = "busy"  # the rest of its trials are running elsewhere
    DONE = "done"  # enough trials finished


class StudyRunner:
    """One study as seen by one worker."""

    def __init__(self, results_dir: Path, sweep: str, study: Study, store, worker: str) -> None:
        self.results_dir, self.sweep, self.study = Path(results_dir), sweep, study
        self.optuna_study = open_study(study, sweep, store, worker)

    def _counts(self) -> dict[str, int]:
        from optuna.trial import TrialState

        counts = {state.name: 0 for state in TrialState}
        for trial in self.optuna_study.get_trials(deepcopy=False):
            counts[trial.state.name] += 1
        return counts

    def state(self) -> StudyState:
        """Whether the study has room for a trial (stale trials of dead workers failed and re-queued first)."""
        import optuna

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            optuna.storages.fail_stale_trials(self.optuna_study)  # dead workers' trials fail and are re-queued
        counts = self._counts()
        finished = counts["COMPLETE"] + counts["PRUNED"]
        if finished >= self.study.trials:
            return StudyState.DONE
        if finished + counts["RUNNING"] >= self.study.trials and counts["WAITING"] == 0:
            return StudyState.BUSY
        return StudyState.OPEN

    def ask(self):
        """A new (or re-queued) trial, or None when other workers already fill the study's trial count."""
        from optuna.trial import TrialState

        trial = self.optuna_study.ask({name: space.distribution() for name, space in self.study.space.items()})
        before = [t for t in self.optuna_study.get_trials(deepcopy=False) if t.number < trial.number]
        live = [t for t in before if t.state != TrialState.FAIL]
        if len(live) >= self.study.trials:
            trial.set_user_attr("surplus", True)
            self.optuna_study.tell(trial, state=TrialState.FAIL)
            return None
        self.heartbeat(trial)  # at once: a trial killed before its first periodic beat would stay RUNNING forever
        return trial

    def frozen(self, trial):
        """The storage's record of an asked trial (its system and user attributes)."""
        return self.optuna_study._storage.get_trial(trial._trial_id)

    def record(self, cell: Cell) -> None:
        """A trial's cell as a cell of the sweep (`sweep_cells.trial`), written once."""
        db.write_trial(self.results_dir, self.sweep, self.study.index, _search_row(cell))

    def chosen(self):
        """The done study's chosen trial: its best completed one (the lowest value, the lowest number on a
        tie, so every worker picks the same), or None when no trial completed."""
        from optuna.trial import TrialState

        completed = self.optuna_study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        return min(completed, key=lambda t: (t.value, t.number), default=None)

    def confirmations(self) -> list[Cell]:
        """The done study's confirmation cells (none without `confirm_seeds` or a completed trial), each
        recorded once as a cell of the sweep (`sweep_cells.confirms`)."""
        chosen = self.chosen() if self.study.confirm_seeds else None
        if chosen is None:
            return []
        cells = self.study.confirmations(cell_number(chosen), chosen.params)
        for cell in cells:
            db.write_confirmation(self.results_dir, self.sweep, self.study.index, cell.index, _search_row(cell))
        return cells

    def heartbeat(self, trial) -> None:
        """Tell the storage the trial's worker is alive (ask/tell has no heartbeat thread of its own)."""
        self.optuna_study._storage.record_heartbeat(trial._trial_id)

    def tell(self, trial, outcome_status: str | None, run_id: str) -> None:
        """The trial's value from the store; a trial that raised is failed (and re-queued by the worker)."""
        from optuna.trial import TrialState

        if outcome_status == "pruned":
            self.optuna_study.tell(trial, state=TrialState.PRUNED)
            return
        status, value = trial_value(self.results_dir, run_id)
        if status in ("completed", "diverged") and value is not None:
            self.optuna_study.tell(trial, value)
        else:
            self.optuna_study.tell(trial, state=TrialState.FAIL)



def _search_row(cell: Cell) -> dict:
    """A search's cell (a trial or a confirmation) as a row of the sweep: no index in the plan (`cell` NULL)."""
    return {**cell.plan_row(), "cell": None}
