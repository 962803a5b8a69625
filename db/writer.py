"""`RunWriter`: the write path of the results store (the training logger and users' scripts call it).

Each writer owns one *segment* of one run: segment 0 for a fresh run, the next number for each resume.
Rows are buffered in memory and published as immutable Parquet shards (temp file + atomic rename) every
`flush_rows` rows or `flush_seconds` seconds, on `flush()` and at `close()`. Writers never share a file,
so any number of them can run at once, on one machine or many sharing a filesystem; a writer killed
without warning loses only the rows it had not yet flushed.
"""

from __future__ import annotations

import json
import os
import socket
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pyarrow as pa

from db.buffer import EventBuffer, LayerBuffer, ScalarBuffer
from db.errors import DbError
from db.flatten import flatten_config
from db.outcomes import SupersededError, fence_earlier, publish_outcome, why_refused
from db.paths import check_run_id, data_shard_name, is_shard_name, parse_segment, run_dir, segment_shard_name
from db.provenance import provenance_row
from db.schema import CONFIG_PREFIX, MANIFEST_SCHEMA, STATUS_SCHEMA, ensure_version_file
from db.shard_io import publish, publish_exclusive

# completed, diverged and pruned (a search trial its pruner stopped early) are results; failed (raised) and
# interrupted (stopped by a signal after a checkpoint) are segments a sweep continues.
STATUSES = ("completed", "diverged", "pruned", "failed", "interrupted")
DEFAULT_FLUSH_ROWS = 200_000
DEFAULT_FLUSH_SECONDS = 30.0


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _check_step(step: Any) -> int:
    if isinstance(step, bool) or not isinstance(step, int):
        try:
            as_int = int(step)
        except (TypeError, ValueError):
            as_int = None
        if as_int is None or as_int != step:
            raise DbError(f"step={step!r} is invalid: must be an integer ≥ 0.")
        step = as_int
    if step < 0:
        raise DbError(f"step={step!r} is invalid: must be an integer ≥ 0.")
    return step


def _check_open_arguments(run_id: str, resume: bool, resume_from_step, flush_rows, claim) -> None:
    """DbError for an invalid run id, a resume step that contradicts `resume`, a bad flush size or claim."""
    check_run_id(run_id)
    if resume and resume_from_step is None:
        raise DbError(f"resume_from_step=None is invalid for resume=True (run {run_id!r}): pass the step the run "
                      "resumes from.")
    if not resume and resume_from_step is not None:
        raise DbError(f"resume_from_step={resume_from_step!r} is only valid with resume=True (run {run_id!r}).")
    if not isinstance(flush_rows, int) or flush_rows < 1:
        raise DbError(f"flush_rows={flush_rows!r} is invalid: must be an integer ≥ 1.")
    if claim is not None and (isinstance(claim, bool) or not isinstance(claim, int) or claim < 0):
        raise DbError(f"claim={claim!r} is invalid: expected an integer ≥ 0 (a claim generation) or None.")


def _check_identity(identity: Mapping[str, Any]) -> None:
    """sweep/arm text, seed/params integers, flops_per_token a number; each may be None."""
    kinds = {"sweep": (str,), "arm": (str,), "seed": (int,), "params": (int,), "flops_per_token": (int, float)}
    for field, value in identity.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, kinds[field])):
            expected = " or ".join(kind.__name__ for kind in kinds[field])
            raise DbError(f"{field}={value!r} is invalid: expected {expected} or None.")


def _existing_segments(run_path: Path) -> list[int]:
    manifest_dir = run_path / "manifest"
    if not manifest_dir.is_dir():
        return []
    return sorted(parse_segment(name) for name in os.listdir(manifest_dir) if is_shard_name(name))


def _manifest_table(run_id: str, segment: int, start_step: int, identity: Mapping[str, Any], config: Mapping[str, Any],
                    claim: int | None, provenance: Mapping[str, Any] | None) -> pa.Table:
    flat = flatten_config(config)
    row = {
        "run_id": run_id, "segment": segment, "start_step": start_step, **identity,
        "started_at": _now(), "host": socket.gethostname(), "pid": os.getpid(),
        "config": json.dumps(flat, sort_keys=True, default=str), "claim": claim, **provenance_row(provenance),
    }
    fields = list(MANIFEST_SCHEMA)
    arrays = [pa.array([row[f.name]], type=f.type) for f in fields]
    for key, value in flat.items():
        column = pa.array([value])
        fields.append(pa.field(CONFIG_PREFIX + key, column.type))
        arrays.append(column)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _fence(path: Path, run_id: str, claim: int | None) -> None:
    """Fence out the run's earlier claim generations before a segment opens under `claim` (db/outcomes.py); refused
    when an earlier generation recorded the run's result, or `claim` was fenced out or has closed a segment."""
    if claim is None:  # a writer outside the claim protocol
        return
    result = fence_earlier(path, claim)
    if result is not None:
        raise SupersededError(f"run {run_id!r} has a result ({result}) from an earlier claim: claim {claim} opens no "
                              "segment.")
    reason = why_refused(path, claim)
    if reason is not None:
        raise SupersededError(f"run {run_id!r}: claim {claim} opens no segment: {reason}.")


class RunWriter:
    """Appends one run's metrics, per-layer metrics and events to the results store. Use `RunWriter.open`.

    Also a context manager: leaving the `with` block closes the run as `completed`, or as `failed`
    (with the error in `summary`) when an exception escapes.
    """

    def __init__(self, path: Path, run_id: str, segment: int, flush_rows: int, flush_seconds: float,
                 claim: int | None = None):
        self.path = path
        self.run_id = run_id
        self.segment = segment
        self.claim = claim
        self.flush_rows = flush_rows
        self.flush_seconds = flush_seconds
        self._metrics = ScalarBuffer(run_id, segment)
        self._layers = LayerBuffer(run_id, segment)
        self._events = EventBuffer(run_id, segment)
        self._buffers: dict[str, ScalarBuffer | LayerBuffer | EventBuffer] = {
            "metrics": self._metrics, "layer_metrics": self._layers, "events": self._events}
        self._pending = 0
        self._next_seq = 0
        self._last_flush = time.monotonic()
        self.closed = False

    @classmethod
    def open(
        cls,
        results_dir: str | os.PathLike,
        run_id: str,
        *,
        sweep: str | None = None,
        arm: str | None = None,
        seed: int | None = None,
        config: Mapping[str, Any] | None = None,
        params: int | None = None,
        flops_per_token: float | None = None,
        resume: bool = False,
        resume_from_step: int | None = None,
        flush_rows: int = DEFAULT_FLUSH_ROWS,
        flush_seconds: float = DEFAULT_FLUSH_SECONDS,
        claim: int | None = None, provenance: Mapping[str, Any] | None = None,
    ) -> "RunWriter":
        """Start run `run_id` (or, with `resume=True`, a new segment of it) and record its manifest.

        `config` is flattened (nested dicts → dotted keys) and each entry becomes a column of the `runs`
        view. With `resume=True`, `resume_from_step` is the first step this segment logs: rows of earlier
        segments at steps ≥ it are hidden by the views, so a crashed run restarted from its checkpoint
        shows each step once. The identity (sweep, arm, seed, config, params, flops) shown in `runs` is
        the first segment's. `claim` is the claim generation a sweep worker writes under (docs/internals.md,
        "Fencing"): opening fences out every earlier generation, or raises `SupersededError` (`_fence`). `provenance`:
        which code and machine write the segment (db/provenance.py's columns; the training logger records them).
        """
        _check_open_arguments(run_id, resume, resume_from_step, flush_rows, claim)
        start_step = _check_step(resume_from_step) if resume else 0
        identity = {"sweep": sweep, "arm": arm, "seed": seed, "params": params, "flops_per_token": flops_per_token}
        _check_identity(identity)
        results_dir = Path(results_dir)
        results_dir.mkdir(parents=True, exist_ok=True)
        ensure_version_file(results_dir)
        path = run_dir(results_dir, run_id)
        segments = _existing_segments(path)
        if segments and not resume:
            raise DbError(f"run {run_id!r} already exists in {results_dir}; pass resume=True to continue it, or pick a "
                          "new run_id.")
        _fence(path, run_id, claim)
        segment = segments[-1] + 1 if segments else 0
        manifest = _manifest_table(run_id, segment, start_step, identity, config or {}, claim, provenance)
        publish_exclusive(path / "manifest" / segment_shard_name(segment), manifest, "manifest")
        return cls(path, run_id, segment, flush_rows, flush_seconds, claim)

    @property
    def pending_rows(self) -> int:
        """Rows buffered in memory and not yet published (what a crash now would lose)."""
        return self._pending

    def _check_open(self) -> None:
        if self.closed:
            raise DbError(f"run {self.run_id!r} is closed; open a new writer (resume=True) to log more.")

    def _rows_added(self, n: int) -> None:
        self._pending += n
        if self._pending >= self.flush_rows or time.monotonic() - self._last_flush >= self.flush_seconds:
            self.flush()

    def log_metrics(self, step: int, values: Mapping[str, float]) -> None:
        """Record scalars at `step` (→ `metrics` view, one row per name). Values: anything `float()` takes."""
        self._check_open()
        step = _check_step(step)
        names = list(values)
        if not all(type(name) is str for name in names):
            raise DbError(f"metric names must be strings; got {[n for n in names if type(n) is not str]!r}.")
        self._metrics.add(step, names, list(map(float, values.values())))
        self._rows_added(len(names))

    def log_layer_metrics(self, step: int, name: str, values: Iterable) -> None:
        """Record one metric per layer (1-D values; head is NULL) or per layer and head (2-D [layer][head]).

        `values` may be a list, a numpy array, or anything with `.tolist()` (e.g. a CPU tensor).
        """
        if self.closed:
            self._check_open()
        if type(step) is not int or step < 0:  # the common case skips the call: this runs ~10× per step
            step = _check_step(step)
        if type(name) is not str:
            raise DbError(f"layer metric name={name!r} is invalid: must be a string.")
        if not isinstance(values, np.ndarray) and hasattr(values, "tolist"):
            values = values.tolist()  # torch tensors and the like
        array = np.asarray(values, dtype=np.float64)  # the buffer copies it
        if array.ndim not in (1, 2):
            raise DbError(f"layer metric {name!r} has shape {array.shape}: expected (layers,) or (layers, heads).")
        if array.size:
            self._layers.add(step, name, array)
            self._rows_added(array.size)

    def log_event(self, step: int, kind: str, value: float | None = None, detail: str | None = None) -> None:
        """Record something that happened at `step` (a loss spike, a divergence, a checkpoint) → `events`."""
        self._check_open()
        step = _check_step(step)
        if type(kind) is not str or not kind:
            raise DbError(f"event kind={kind!r} is invalid: must be a non-empty string.")
        self._events.add(step, kind, None if value is None else float(value), None if detail is None else str(detail),
                         _now())
        self._rows_added(1)

    def flush(self) -> None:
        """Publish every buffered row now (one shard per non-empty table)."""
        for table, buffer in self._buffers.items():
            if len(buffer):
                publish(self.path / table / data_shard_name(self.segment, self._next_seq), buffer.take_table(), table)
                self._next_seq += 1
        self._pending = 0
        self._last_flush = time.monotonic()

    def close(self, status: str = "completed", *, diverged_at_step: int | None = None,
              summary: Mapping[str, Any] | None = None) -> None:
        """Flush and record how the segment ended: `completed`, `diverged` (results), `failed` (raised; to retry) or
        `interrupted` (stopped on request after a checkpoint; to resume). A writer under a claim generation that
        was fenced out meanwhile records nothing (not even its last rows) and raises `SupersededError`."""
        self._check_open()
        if status not in STATUSES:
            raise DbError(f"status={status!r} is invalid; valid options: {', '.join(map(repr, STATUSES))}.")
        if diverged_at_step is not None:
            if status != "diverged":
                raise DbError(f"diverged_at_step={diverged_at_step!r} is only valid with status='diverged', not "
                              f"{status!r}.")
            diverged_at_step = _check_step(diverged_at_step)
        if self.claim is not None and (reason := why_refused(self.path, self.claim)) is not None:
            self.closed = True
            raise SupersededError(f"run {self.run_id!r} segment {self.segment}: status {status!r} not recorded: "
                                  f"{reason}")
        self.flush()
        row = {
            "run_id": [self.run_id], "segment": [self.segment], "status": [status], "finished_at": [_now()],
            "diverged_at_step": [diverged_at_step],
            "summary": [None if summary is None else json.dumps(dict(summary), sort_keys=True, default=str)],
        }
        table = pa.table(row, schema=STATUS_SCHEMA)
        if self.claim is None:
            publish_exclusive(self.path / "status" / segment_shard_name(self.segment), table, "status")
        else:
            try:
                publish_outcome(self.path, self.claim, self.segment, table)
            except SupersededError:
                self.closed = True  # fenced out between the look above and the publication: just as final
                raise
        self.closed = True

    def __enter__(self) -> "RunWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.closed:
            return
        if exc is None:
            self.close("completed")
        else:
            self.close("failed", summary={"error": f"{exc_type.__name__}: {exc}"})
