"""Which cell a trial is. A trial that Optuna retries (its worker stalled or died: `RetryHeartbeatStaleTrialCallback`)
or that the worker re-queues (it raised) trains the same configs, so the same run: it is the same cell of the
sweep as the trial it retries, recorded under that trial's number, so a search keeps studies × trials cells
however often a trial is retried."""

from __future__ import annotations

RETRY_OF = "retry_of"  # user attribute of a trial re-queued after it raised: the cell number it retries


def cell_number(trial) -> int:
    """The number of the first trial of `trial`'s retry chain (its own number when it is no retry); `trial` is
    a FrozenTrial (an asked `optuna.Trial` has no system attributes: `StudyRunner.frozen` gives its record)."""
    retried = trial.system_attrs.get("failed_trial")  # Optuna's stale-trial retry keeps the chain's first number
    if retried is None:
        retried = trial.user_attrs.get(RETRY_OF)
    return trial.number if retried is None else retried
