"""The runs a decision benchmark is judged on, read from one or more ladder sweeps and pooled.

- A run's **variant** is its arm up to `@`, its **rung** the arm's suffix after it (`d_model=144`): what the
  ladder named it, so two arms of one rung stay one rung even where an arm changes a rung field itself (the
  depth decision's 8-layer arm). A sweep whose arms carry no `@` (runs written with `db.RunWriter` under one arm
  name at several sizes) is read by its runs' `d_model` and `n_layers`, as `harness compare --ladder` reads it.
- Rungs of every sweep are pooled by name and ordered by their runs' median parameters; the largest is the
  **reference**. A rung's **compute** is its completed runs' median training FLOPs (`flops_per_token` × tokens).
- Each run keeps its outcome on the metric (`analysis.reading.outcomes`: completed with a finite value, or diverged) and
  its ℓ (the metric, or ℓ₀ for a divergence: the LR sensitivity's rule), from which a variant's best LR at a
  rung is chosen (`decision_verdicts.best_lrs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np
import pandas as pd

from analysis.errors import AnalysisError
from analysis.ladder import SEPARATOR
from analysis.ladder.points import LadderData, baseline_variant, ladder_runs, variant_labels
from analysis.reading.finished import check_finished, check_metric
from analysis.reading.frames import Sweep, runs_frame
from analysis.reading.source import membership_sql, sweep_info

COLUMNS = ["sweep", "variant", "rung", "lr", "seed", "outcome", "value", "loss", "compute", "params"]


@dataclass(frozen=True)
class DecisionRuns:
    """Every run of the pooled sweeps (`COLUMNS`), the rungs smallest first, each sweep's variants (its baseline
    first), display labels by (sweep, variant), the SQL behind the runs, and the progress of each sweep still
    running."""

    runs: pd.DataFrame
    rungs: list[str]
    variants: dict[str, list[str]]
    labels: dict[tuple[str, str], str] = field(default_factory=dict)
    sql: list[str] = field(default_factory=list)
    partial: dict[str, str] = field(default_factory=dict)

    @property
    def reference(self) -> str:
        """The largest rung: the decisions every smaller one is judged against."""
        return self.rungs[-1]

    def compute(self, rung: str) -> float:
        """The rung's training compute: the median over its completed runs (NaN: none completed)."""
        done = self.runs[(self.runs["rung"] == rung) & (self.runs["outcome"] == "completed")]
        return float(done["compute"].median()) if len(done) else np.nan

    def label(self, sweep: str, variant: str) -> str:
        """What tables call the variant."""
        return self.labels.get((sweep, variant), variant)


def _ordered(runs: pd.DataFrame) -> list[str]:
    """The rungs of `runs`, smallest first by their runs' median parameters."""
    return runs.groupby("rung")["params"].median().sort_values(kind="stable").index.tolist()


def sweep_runs(sweep: Sweep, metric: str, baseline: str | None = None) -> DecisionRuns:
    """One loaded sweep's runs; AnalysisError for an unknown metric or baseline, or a sweep that has no finished
    run or is not a ladder."""
    check_metric(sweep, metric)
    check_finished(sweep)
    runs, sql = ladder_runs(sweep, metric)
    if runs["arm"].str.contains(SEPARATOR, regex=False).all():
        runs["rung"] = runs["arm"].str.split(SEPARATOR, n=1).str[1]
    name = sweep.info.name
    base = baseline_variant(sweep, set(runs["variant"]), baseline)
    variants = [base] + sorted(v for v in runs["variant"].unique() if v != base)
    labels = {(name, variant): label for variant, label in variant_labels(sweep).items()}
    partial = {name: sweep.info.progress()} if sweep.info.running else {}
    runs = runs.assign(sweep=name)[COLUMNS]
    return DecisionRuns(runs, _ordered(runs), {name: variants}, labels, sql, partial)


def _loaded(results_dir, names: list[str]) -> Iterator[Sweep]:
    """Each named sweep in turn, as `analysis.reading.frames.load_sweep` loads it but on one connection: the store's
    views and the shadowing `runs` table are built once (a connection per sweep built them a dozen times, 80% of the
    time of a 12-sweep benchmark), and `sweep_runs` is replaced for the next sweep once this one has been read."""
    import db

    try:
        con = db.connect(results_dir)
    except db.DbError as err:
        raise AnalysisError(str(err)) from err
    con.execute("CREATE TEMP TABLE runs AS SELECT * FROM main.runs")
    for name in names:
        info, members = sweep_info(con, name), membership_sql(con, name)
        con.execute(f"CREATE OR REPLACE TEMP TABLE sweep_runs AS {members}")
        yield Sweep(con, info, members, results_dir, runs_frame(con))


def decision_runs(results_dir, sweeps: list[str], metric: str) -> DecisionRuns:
    """The runs of `sweeps` pooled; AnalysisError for an unknown sweep or metric, a sweep with no finished run or
    that is no ladder, or a sweep named twice."""
    repeated = sorted({name for name in sweeps if sweeps.count(name) > 1})
    if repeated:
        raise AnalysisError(f"sweep {repeated[0]!r} is named twice; name each sweep once.")
    parts = [sweep_runs(sweep, metric) for sweep in _loaded(results_dir, sweeps)]
    runs = pd.concat([part.runs for part in parts], ignore_index=True)
    merged = {name: {k: v for part in parts for k, v in getattr(part, name).items()}
              for name in ("variants", "labels", "partial")}
    sql = [query for part in parts for query in part.sql]
    return DecisionRuns(runs, _ordered(runs), merged["variants"], merged["labels"], sql, merged["partial"])


def from_ladder(data: LadderData, sweep: str = "ladder") -> DecisionRuns:
    """A ladder's points as runs: each variant's completed seeds at its best LR at each rung (a `LadderData` keeps
    no diverged run: a decision on it sees loss alone)."""
    v, r, s = np.nonzero(~np.isnan(data.loss))
    runs = pd.DataFrame({"sweep": sweep, "variant": np.asarray(data.variants, dtype=object)[v],
                         "rung": np.asarray(data.rungs, dtype=object)[r],
                         "lr": np.nan_to_num(data.lr[v, r], nan=-1.0),  # a searched LR: one of its own (ladder_runs)
                         "seed": np.asarray(data.seeds)[s],
                         "outcome": "completed", "value": data.loss[v, r, s], "loss": data.loss[v, r, s],
                         "compute": data.compute[v, r], "params": data.params[v, r]}, columns=COLUMNS)
    return DecisionRuns(runs, list(data.rungs), {sweep: list(data.variants)},
                        {(sweep, v): label for v, label in zip(data.variants, data.labels)}, list(data.sql))
