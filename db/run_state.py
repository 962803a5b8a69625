"""How far one run got, read straight from its manifest and status shards (no DuckDB, no views): what a
sweep worker asks before and after claiming a cell, thousands of times a sweep, so it must be cheap."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from db.paths import is_shard_name, parse_segment, run_dir, segment_shard_name

RESULTS = ("completed", "diverged", "pruned")


@dataclass(frozen=True)
class RunState:
    """The segments of a run and how each ended (`None`: no status yet, so running, crashed or killed)."""

    run_id: str
    segments: tuple[int, ...] = ()
    statuses: dict[int, str] = field(default_factory=dict)

    @property
    def exists(self) -> bool:
        return bool(self.segments)

    @property
    def last_status(self) -> str | None:
        """The latest segment's status; None for a run with no segment or whose latest segment has none."""
        return self.statuses.get(self.segments[-1]) if self.segments else None

    @property
    def result(self) -> str | None:
        """'completed', 'diverged' or 'pruned' once the run has a result, else None."""
        return self.last_status if self.last_status in RESULTS else None

    @property
    def failures(self) -> int:
        """Segments that ended by raising (each one attempt of a sweep's retries)."""
        return sum(1 for status in self.statuses.values() if status == "failed")


def _segments(folder: str) -> list[int]:
    try:
        return sorted(parse_segment(e.name) for e in os.scandir(folder) if is_shard_name(e.name))
    except FileNotFoundError:
        return []


def run_state(results_dir: str | os.PathLike, run_id: str) -> RunState:
    """The run's segments and their statuses, from the files themselves (a shard being renamed into place
    is simply not there yet)."""
    path = run_dir(Path(results_dir), run_id)
    segments = _segments(os.path.join(path, "manifest"))
    statuses = {}
    for segment in _segments(os.path.join(path, "status")):
        try:
            table = pq.read_table(os.path.join(path, "status", segment_shard_name(segment)), columns=["status"])
        except (OSError, ValueError):  # damaged: treat as no status; the views warn about it
            continue
        if table.num_rows:
            statuses[segment] = table.column("status")[0].as_py()
    return RunState(run_id, tuple(segments), statuses)
