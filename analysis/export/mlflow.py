"""MLflow: a local file store in DIR (tracking URI `file:DIR`), one experiment per sweep, a parent run per arm.

Each harness run is a child of its arm's run (`mlflow.parentRunId`), so MLflow's UI folds an arm's seeds
under one row. Params: the run's config; tags: the summary as `harness.<key>`; metrics: every series. The
file store keeps one file per metric, so a name cannot be both a metric and a folder (`attn_logit_max` is
logged per step and per layer): per-layer series are named with dots here, `attn_logit_max.layer_3`.
A re-export deletes (MLflow's soft delete: `mlflow gc` purges) the runs an earlier export wrote for the same
harness runs and writes them anew; the arms' parent runs are kept.
"""

from __future__ import annotations

import time
from datetime import datetime
from itertools import islice
from pathlib import Path

from analysis.export.runs import ExportRun, SweepRuns

# The file store is in maintenance mode since MLflow 3.13 and refused unless allowed; telemetry is a network call.
ENVIRONMENT = {"MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_DISABLE_TELEMETRY": "true"}
TAG_PREFIX = "harness."
KIND = TAG_PREFIX + "kind"  # "arm" on a parent run, "run" on a harness run
LAYER_SEPARATOR = "."
PER_BATCH = {"metrics": 1000, "params": 100, "tags": 100}  # MLflow's limits of one log_batch call


def _batches(items, size: int):
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


class _Store:
    """One sweep's experiment in the file store, with the runs an earlier export left there."""

    def __init__(self, out_dir: Path, sweep: str):
        from mlflow.tracking import MlflowClient

        self.client = MlflowClient(tracking_uri=out_dir.resolve().as_uri())
        self.sweep = sweep
        experiment = self.client.get_experiment_by_name(sweep)
        if experiment is None:
            self.experiment = self.client.create_experiment(sweep)
        else:
            self.experiment = experiment.experiment_id
            if experiment.lifecycle_stage == "deleted":
                self.client.restore_experiment(self.experiment)
        self.parents: dict[str, str] = {}  # arm → its parent run
        self.previous: dict[str, str] = {}  # harness run id → the MLflow run an earlier export wrote
        for found in self._active_runs():
            tags = found.data.tags
            if tags.get(KIND) == "arm":
                self.parents[tags[TAG_PREFIX + "arm"]] = found.info.run_id
            elif tags.get(KIND) == "run":
                self.previous[tags[TAG_PREFIX + "run_id"]] = found.info.run_id

    def _active_runs(self):
        token = None
        while True:
            page = self.client.search_runs([self.experiment], max_results=1000, page_token=token)
            yield from page
            token = page.token
            if not token:
                return

    def parent(self, arm: str) -> str:
        """The arm's parent run, created at its first run."""
        if arm not in self.parents:
            tags = {KIND: "arm", TAG_PREFIX + "arm": arm, TAG_PREFIX + "sweep": self.sweep}
            created = self.client.create_run(self.experiment, run_name=arm, tags=tags).info.run_id
            self.client.set_terminated(created, "FINISHED")
            self.parents[arm] = created
        return self.parents[arm]

    def write(self, run: ExportRun) -> None:
        """The run as a child of its arm's run, replacing what an earlier export wrote for it."""
        from mlflow.entities import Metric, Param

        if run.run_id in self.previous:
            self.client.delete_run(self.previous.pop(run.run_id))
        tags = {"mlflow.parentRunId": self.parent(run.arm), KIND: "run",
                **{TAG_PREFIX + key: str(value) for key, value in run.summary.items()}}
        created = self.client.create_run(self.experiment, start_time=_ms(run.started_at), tags=tags,
                                         run_name=run.run_id).info.run_id
        for params in _batches((Param(key, str(value)) for key, value in run.config.items()), PER_BATCH["params"]):
            self.client.log_batch(created, params=params)
        now = int(time.time() * 1000)
        metrics = (Metric(series.tag(LAYER_SEPARATOR), value, now, step)
                   for series in run.series for step, value in zip(series.steps, series.values))
        for batch in _batches(metrics, PER_BATCH["metrics"]):
            self.client.log_batch(created, metrics=batch)
        self.client.set_terminated(created, "FAILED" if run.failed else "FINISHED", end_time=_ms(run.finished_at))


def write(runs: SweepRuns, out_dir: Path, progress) -> None:
    """Write every run into the file store (see the module's docstring)."""
    store = _Store(out_dir, runs.name)
    for run in progress(runs):
        store.write(run)
