"""One outcome per claim generation: a superseded writer's late status is refused, never recorded
(docs/internals.md, "Fencing and final results").

Checking the claim and then publishing a status is check-then-act: a writer paused between the two wakes after
another took its cell over and finished it. So the store itself decides, with one exclusive file per generation
of a run's claim, `runs/<run_id>/outcomes/g<generation>`, created (a hard link: it fails if the name exists, on
one machine and on a shared filesystem alike) by whichever comes first:
- the generation's own writer closing its segment: the slot is its status shard, hard-linked right after to
  `status/s<segment>.parquet`, the name every reader reads; or
- a writer of a later generation, as soon as it holds its claim and again when it opens its segment: a
  *tombstone* saying which generation fenced it out.
Exactly one of the two wins, so a status is recorded only while its generation is the live one. A writer that
fences and finds a status in a slot finishes that status's publication (its closer may have died between its
two links) and learns whether the run already has a result.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from db.errors import DbError
from db.paths import run_dir, segment_shard_name
from db.segments import RESULTS
from db.shard_io import publish_exclusive

OUTCOMES_DIR = "outcomes"
PARQUET_MAGIC = b"PAR1"


class SupersededError(DbError):
    """A claimed writer may record no status: its generation was fenced out by a later claim, or has already
    closed a segment, or an earlier generation recorded the run's result."""


@dataclass(frozen=True)
class Outcome:
    """What a generation's slot holds: the status it closed a segment with, or the generation that fenced it."""

    segment: int | None = None
    status: str | None = None
    fenced_by: int | None = None


def slot_path(run_path: Path, generation: int) -> Path:
    """The one outcome file of `generation` of the run at `run_path`."""
    return Path(run_path) / OUTCOMES_DIR / f"g{generation:06d}"


def read_slot(path: Path) -> Outcome | None:
    """The slot's outcome; None while it is free. An unreadable slot is taken by an unknown outcome."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except FileNotFoundError:
        return None
    try:
        if head == PARQUET_MAGIC:
            row = pq.ParquetFile(path).read(columns=["segment", "status"]).to_pylist()[0]
            return Outcome(segment=row["segment"], status=row["status"])
        return Outcome(fenced_by=int(json.loads(Path(path).read_text())["fenced_by"]))
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return Outcome()


def why_refused(run_path: Path, generation: int) -> str | None:
    """Why a writer of `generation` may record no status, or None while its slot is free."""
    outcome = read_slot(slot_path(run_path, generation))
    if outcome is None:
        return None
    if outcome.fenced_by is not None:
        return f"claim {generation} was superseded by claim {outcome.fenced_by}"
    if outcome.segment is not None:
        return f"claim {generation} already closed segment {outcome.segment} ({outcome.status})"
    return f"the outcome of claim {generation} ({slot_path(run_path, generation)}) is unreadable"


def _finish_publication(run_path: Path, slot: Path, segment: int) -> None:
    """Give a status found in a slot its reader-visible name (idempotent: the closer may have done it)."""
    status = Path(run_path) / "status" / segment_shard_name(segment)
    status.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(slot, status)
    except FileExistsError:
        pass


def fence_earlier(run_path: Path, generation: int) -> str | None:
    """Fence out every generation of the run below `generation`: a tombstone in each free slot; a status found
    in one is published (see `_finish_publication`). Returns the result an earlier generation recorded, if any."""
    folder = Path(run_path) / OUTCOMES_DIR
    folder.mkdir(parents=True, exist_ok=True)
    tombstone = folder / f".tombstone-g{generation}.tmp-{os.getpid()}"
    tombstone.write_text(json.dumps({"fenced_by": generation}))
    result = None
    try:
        for earlier in range(generation):
            slot = slot_path(run_path, earlier)
            try:
                os.link(tombstone, slot)
                continue
            except FileExistsError:
                pass
            outcome = read_slot(slot)
            if outcome is not None and outcome.segment is not None:
                _finish_publication(run_path, slot, outcome.segment)
                result = outcome.status if outcome.status in RESULTS else result
    finally:
        tombstone.unlink()
    return result


def fence_earlier_claims(results_dir: str | os.PathLike, run_id: str, generation: int) -> str | None:
    """`fence_earlier` for a run that has a folder (a sweep worker calls it the moment it holds claim
    `generation`); a run nobody has written yet has nothing to fence."""
    path = run_dir(Path(results_dir), run_id)
    return fence_earlier(path, generation) if path.is_dir() else None


def publish_outcome(run_path: Path, generation: int, segment: int, status_table: pa.Table) -> None:
    """Record the status of `segment`, closed under claim `generation`: first in the generation's slot
    (SupersededError if it is taken), then under the reader-visible status name."""
    slot = slot_path(run_path, generation)
    try:
        publish_exclusive(slot, status_table, "status")
    except DbError:
        if not slot.exists():
            raise
        status, reason = status_table.column("status")[0].as_py(), why_refused(run_path, generation)
        raise SupersededError(f"run {Path(run_path).name!r} segment {segment}: status {status!r} not recorded: "
                              f"{reason}") from None
    _finish_publication(run_path, slot, segment)
