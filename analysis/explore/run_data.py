"""What the one-run view draws (`static/run.js`): every recorded signal of each run, its spikes and divergence, and
the facts about it (config, status, seed, arm, LR, the code that made it where the store has it).

The report carries it for every finished run, bucketed so the page stays small: the loss curves at the loss
figure's `CURVE_POINTS` (that figure averages them), the other signals at `RUN_POINTS`; the dashboard's run page
carries one run, finer. Each series is `[steps, values]`: a bucket's step is where it starts (the same for every
run, so the loss figure averages runs step by step), its value the mean (the attention logit: the max over heads,
then the mean over the bucket's probes).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pandas as pd

from analysis.reading.frames import CURVE_POINTS, Sweep
from analysis.reading.source import FINISHED
from db.sql import quote_literal

LOSSES = ("train_loss", "val_loss")
SIGNALS = ("lr", "grad_norm", "output_logit_max_abs", "output_log_z_mean")
LAYER_SIGNAL = "attn_logit_max"
EVENTS = ("loss_spike", "grad_norm_spike", "diverged")
RUN_POINTS = 100  # per signal and run in a report: spikes are drawn from their events, not from these buckets
FACTS = ("run_id", "sweep", "arm", "lr", "seed", "status", "final_val_loss", "best_val_loss", "final_train_loss",
         "diverged_at_step", "last_step", "n_segments", "params", "flops_per_token", "host", "started_at",
         "finished_at")
# Which code and machine made the run: the `runs` view's provenance columns, shown when the store has them.
PROVENANCE = ("harness_version", "git_commit", "git_dirty", "code_versions", "torch_version", "lightning_version",
              "python_version", "device_name", "trainer_precision")


@dataclass(frozen=True)
class RunView:
    """Per run: `curves` (name → run → [steps, values]), `layers` (run → layer → [steps, values] of the max
    attention logit), `events` (run → [[step, kind, value]]), `info` (run → facts, config, provenance); and the SQL
    of each, by what it fed."""

    curves: dict[str, dict[str, list]]
    layers: dict[str, dict[str, list]]
    events: dict[str, list]
    info: dict[str, dict]
    sql: dict[str, str]

    def data(self) -> dict:
        """The page's JSON of it (its SQL goes into the page's folds instead)."""
        return {"curves": self.curves, "layers": self.layers, "events": self.events, "info": self.info}


def runs_where(run_id: str | None = None, statuses: tuple[str, ...] | None = FINISHED) -> str:
    """The condition on `r` (a `sweep_runs` row) choosing the runs shown: those with `statuses` (None: any), or
    `run_id` alone."""
    found = [f"r.status IN ({', '.join(map(quote_literal, statuses))})"] if statuses else []
    found += [f"r.run_id = {quote_literal(run_id)}"] if run_id is not None else []
    return " AND ".join(found) or "true"


def _series(frame: pd.DataFrame, key: str) -> dict[str, list]:
    """key value → [steps, values], from rows (key, step, value) in step order."""
    return {str(name): [rows["step"].tolist(), rows["value"].tolist()] for name, rows in frame.groupby(key, sort=False)}


def metric_series(sweep: Sweep, names: tuple[str, ...], points: int, where: str) -> tuple[dict[str, dict], str]:
    """name → run → [steps, values] of the metrics `names`, finite values averaged into `points` buckets per run."""
    stride = sweep.stride(points)
    frame, sql = sweep.frame(f"""
        SELECT m.name, m.run_id, m.step // {stride} * {stride} AS step, avg(m.value) AS value
        FROM metrics m JOIN sweep_runs r USING (run_id)
        WHERE m.name IN ({', '.join(map(quote_literal, names))}) AND isfinite(m.value) AND {where}
        GROUP BY ALL ORDER BY m.name, m.run_id, step
    """)
    return {name: _series(rows, "run_id") for name, rows in frame.groupby("name", sort=False)}, sql


def layer_series(sweep: Sweep, points: int, where: str) -> tuple[dict[str, dict], str]:
    """run → layer → [steps, values]: the max attention logit over heads, per probe step bucket."""
    stride = sweep.stride(points)
    frame, sql = sweep.frame(f"""
        SELECT run_id, layer, step // {stride} * {stride} AS step, avg(value) AS value FROM (
            SELECT l.run_id, l.layer, l.step, max(l.value) AS value
            FROM layer_metrics l JOIN sweep_runs r USING (run_id)
            WHERE l.name = '{LAYER_SIGNAL}' AND isfinite(l.value) AND {where} GROUP BY ALL) probes
        GROUP BY ALL ORDER BY run_id, layer, step
    """)
    return {run: _series(rows, "layer") for run, rows in frame.groupby("run_id", sort=False)}, sql


def run_events(sweep: Sweep, where: str) -> tuple[dict[str, list], str]:
    """run → [[step, kind, value]]: its spikes and its divergence."""
    frame, sql = sweep.frame(f"""
        SELECT e.run_id, e.step, e.kind, e.value FROM events e JOIN sweep_runs r USING (run_id)
        WHERE e.kind IN ({', '.join(map(quote_literal, EVENTS))}) AND {where} ORDER BY e.run_id, e.step
    """)
    by_run = frame.groupby("run_id", sort=False)
    return {run: rows[["step", "kind", "value"]].values.tolist() for run, rows in by_run}, sql


def _value(value):
    """A fact as JSON takes it: None when missing, a time as ISO text."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.isoformat(timespec="seconds") if hasattr(value, "isoformat") else value


def _facts(row: dict) -> dict:
    """One run's facts, its config (the flat config it was written with) and its provenance where recorded."""
    config = json.loads(row["config"]) if isinstance(row.get("config"), str) else {}
    provenance = {name: _value(row[name]) for name in PROVENANCE if name in row}
    return {**{name: _value(row[name]) for name in FACTS if name in row}, "config": config,
            "provenance": {name: value for name, value in provenance.items() if value is not None}}


def run_view(sweep: Sweep, run_id: str | None = None, statuses: tuple[str, ...] | None = FINISHED,
             loss_points: int | None = CURVE_POINTS, points: int = RUN_POINTS) -> RunView:
    """The one-run view's data of the sweep's runs with `statuses` (None: any), or of `run_id` alone; `loss_points`
    None leaves the loss curves out (the report has them already, for its loss figure)."""
    where = runs_where(run_id, statuses)
    losses, loss_sql = metric_series(sweep, LOSSES, loss_points, where) if loss_points else ({}, None)
    signals, signal_sql = metric_series(sweep, SIGNALS, points, where)
    layers, layer_sql = layer_series(sweep, points, where)
    events, event_sql = run_events(sweep, where)
    runs = sweep.runs if run_id is None else sweep.runs[sweep.runs["run_id"] == run_id]
    runs = runs if not statuses else runs[runs["status"].isin(statuses)]
    info = {row["run_id"]: _facts(row) for row in runs.to_dict("records")}
    sql = {"losses": loss_sql, "signals": signal_sql, "layers": layer_sql, "events": event_sql}
    return RunView({**losses, **signals}, layers, events, info, {name: text for name, text in sql.items() if text})
