"""One sweep's runs as the trackers take them: per run its config, its summary and every recorded series.

Membership comes from `analysis.reading.source` (the `sweep_cells` view joined with `runs`), so a run adopted from
another sweep is exported with this sweep's arm, LR and seed. Runs are read one at a time: a sweep's whole
history need not fit in memory. Torch-free and pandas-free.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Iterator

from analysis.reading.source import SweepSource, open_sweep

# The verdict-relevant summary every tracker gets, in this order (a NULL is left out, as for config values).
SUMMARY = ("sweep", "arm", "seed", "lr", "status", "final_val_loss", "best_val_loss", "diverged_at_step",
           "last_step", "run_id")
FAILED = ("failed", "crashed")  # statuses a tracker shows as a failed run; any other ends as finished
_ROW_COLUMNS = (*SUMMARY[1:], "config", "started_at", "finished_at")


@dataclass(frozen=True)
class Series:
    """One metric's history in a run: a `metrics` name, or one layer (and head) of a `layer_metrics` name."""

    name: str
    layer: int | None  # None: a step metric
    head: int | None  # None: a layer-wide value (or a step metric)
    steps: tuple[int, ...]
    values: tuple[float, ...]

    def tag(self, separator: str = "/") -> str:
        """`train_loss`; `attn_logit_max/layer_3`; `attn_logit_max/layer_3/head_1` (with separator '/')."""
        parts = [self.name] + ([f"layer_{self.layer}"] if self.layer is not None else [])
        return separator.join(parts + ([f"head_{self.head}"] if self.head is not None else []))


@dataclass(frozen=True)
class ExportRun:
    """One run of the sweep: what every tracker writes for it."""

    run_id: str
    arm: str
    status: str
    config: dict[str, Any]  # the run's flattened config, NULLs left out
    summary: dict[str, Any]  # SUMMARY's keys that are not NULL
    series: tuple[Series, ...]
    started_at: datetime | None
    finished_at: datetime | None

    @property
    def failed(self) -> bool:
        """Whether the run raised or crashed (trackers mark it failed; a diverged run is a result)."""
        return self.status in FAILED

    def by_step(self, separator: str = "/") -> list[tuple[int, dict[str, float]]]:
        """Every value grouped by step, steps ascending: `[(step, {tag: value})]`, as step-ordered loggers take them."""
        rows: dict[int, dict[str, float]] = {}
        for series in self.series:
            tag = series.tag(separator)
            for step, value in zip(series.steps, series.values):
                rows.setdefault(step, {})[tag] = value
        return sorted(rows.items())


@dataclass
class SweepRuns:
    """A sweep's runs, listed at once and read one by one (`for run in sweep_runs`)."""

    source: SweepSource
    rows: list[dict[str, Any]]  # one per run: SUMMARY's columns, config JSON, start and end times

    @property
    def name(self) -> str:
        return self.source.info.name

    @property
    def arms(self) -> list[str]:
        """The arms that have a run, by name."""
        return sorted({row["arm"] for row in self.rows})

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[ExportRun]:
        for row in self.rows:
            yield self._run(row)

    def _run(self, row: dict[str, Any]) -> ExportRun:
        summary = {key: row[key] for key in SUMMARY[1:] if row[key] is not None}
        config = {key: value for key, value in json.loads(row["config"] or "{}").items() if value is not None}
        return ExportRun(row["run_id"], row["arm"], row["status"], config, {"sweep": self.name, **summary},
                         self._series(row["run_id"]), row["started_at"], row["finished_at"])

    def _series(self, run_id: str) -> tuple[Series, ...]:
        history = "list(step ORDER BY step), list(value ORDER BY step)"
        rows = self.source.con.execute(
            f"SELECT name, NULL, NULL, {history} FROM metrics WHERE run_id = $1 GROUP BY name UNION ALL "
            f"SELECT name, layer, head, {history} FROM layer_metrics WHERE run_id = $1 GROUP BY name, layer, head "
            "ORDER BY 1, 2 NULLS FIRST, 3 NULLS FIRST", [run_id]).fetchall()
        return tuple(Series(name, layer, head, tuple(steps), tuple(values))
                     for name, layer, head, steps, values in rows)


def read_sweep(results_dir: str | os.PathLike | None, sweep: str) -> SweepRuns:
    """The sweep's runs (every cell that has a run, whatever its status), ordered by arm, seed and run id;
    AnalysisError (one line, with the closest sweep name) for a missing store or an unknown sweep."""
    source = open_sweep(results_dir, sweep)
    result = source.con.execute(
        f"SELECT {', '.join(_ROW_COLUMNS)} FROM sweep_runs ORDER BY arm, seed NULLS LAST, lr NULLS LAST, run_id")
    names = [column[0] for column in result.description]
    return SweepRuns(source, [dict(zip(names, values)) for values in result.fetchall()])
