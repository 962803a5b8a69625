"""How far one run got, read straight from its manifest and status shards (no DuckDB, no views): what a
sweep worker asks before and after claiming a cell, and before every fenced write, thousands of times a
sweep, so it must be cheap. It applies the views' rule of which segments count (`db/segments.py`)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from db.paths import is_shard_name, parse_segment, run_dir, segment_shard_name
from db.segments import RESULTS, Segment, counting_segments


@dataclass(frozen=True)
class RunState:
    """The counting segments of a run and how each ended (`None`: no status yet, so running, crashed or
    killed); `opened` is every segment on disk, counting or not."""

    run_id: str
    segments: tuple[int, ...] = ()
    statuses: dict[int, str] = field(default_factory=dict)
    opened: tuple[int, ...] = ()

    @property
    def exists(self) -> bool:
        return bool(self.opened)

    @property
    def last_status(self) -> str | None:
        """The latest counting segment's status; None for a run with no segment or whose latest has none."""
        return self.statuses.get(self.segments[-1]) if self.segments else None

    @property
    def result(self) -> str | None:
        """'completed', 'diverged' or 'pruned' once the run has a result, else None."""
        return self.last_status if self.last_status in RESULTS else None

    @property
    def result_segment(self) -> int | None:
        """The segment that holds the run's result, or None."""
        return self.segments[-1] if self.result is not None else None

    @property
    def failures(self) -> int:
        """Counting segments that ended by raising (each one attempt of a sweep's retries)."""
        return sum(1 for s in self.segments if self.statuses.get(s) == "failed")


def _segments(folder: str) -> list[int]:
    try:
        return sorted(parse_segment(e.name) for e in os.scandir(folder) if is_shard_name(e.name))
    except FileNotFoundError:
        return []


def _column(path: str, name: str):
    """The first value of one column of a one-row shard; None when the shard or the column is unreadable."""
    try:
        table = pq.ParquetFile(path).read(columns=[name])  # not pq.read_table: that imports pandas (~0.4 s)
    except (OSError, ValueError):
        return None
    return table.column(name)[0].as_py() if table.num_rows and name in table.column_names else None


def _claims(path: str, segments: list[int]) -> dict[int, int | None]:
    """Each segment's claim generation; a single segment always counts, so its manifest is not read."""
    if len(segments) < 2:
        return {s: None for s in segments}
    manifest = os.path.join(path, "manifest")
    return {s: _column(os.path.join(manifest, segment_shard_name(s)), "claim") for s in segments}


def run_state(results_dir: str | os.PathLike, run_id: str) -> RunState:
    """The run's segments and their statuses, from the files themselves (a shard being renamed into place
    is simply not there yet)."""
    path = run_dir(Path(results_dir), run_id)
    opened = _segments(os.path.join(path, "manifest"))
    statuses = {}
    for segment in _segments(os.path.join(path, "status")):
        # A damaged status shard reads as no status; the views warn about it.
        status = _column(os.path.join(path, "status", segment_shard_name(segment)), "status")
        if status is not None:
            statuses[segment] = status
    claims = _claims(str(path), opened)
    counting = counting_segments(Segment(s, claims[s], statuses.get(s)) for s in opened)
    numbers = tuple(s.number for s in counting)
    return RunState(run_id, numbers, {s: statuses[s] for s in numbers if s in statuses}, tuple(opened))


def result_summary(results_dir: str | os.PathLike, run_id: str) -> dict | None:
    """The summary the run's result was closed with (which names its final checkpoint), or None before a
    result."""
    import json

    state = run_state(results_dir, run_id)
    if state.result_segment is None:
        return None
    path = os.path.join(run_dir(Path(results_dir), run_id), "status", segment_shard_name(state.result_segment))
    text = _column(path, "summary")
    return json.loads(text) if text else {}
