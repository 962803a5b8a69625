"""Retiring a run so its cell trains again under the same key (`--rerun-changed`; docs/db.md, "Provenance").

A result is final (docs/internals.md, "Fencing and final results"), so a run is never rewritten in place: its
folder moves whole, with its companions (its checkpoints), to `<results>/archive/<run_id>/<n>/`, and the cell
has no run until it is trained again. Nothing is deleted. Only a run with a result is moved: nobody writes into
one (every writer checks for a result first), so no live writer loses its folder.

The moves are ordered so that a crash at any point loses nothing and changes no answer: `why.json` (what moves
where, and why) is written first, then each companion, then the run itself. Until that last rename the run keeps
its result and is reused as before; `finish_archiving` (called by every launch) completes an entry a crash
left with its record written but its run still in place.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from db.paths import run_dir
from db.run_state import run_state

ARCHIVE_DIR = "archive"
RECORD = "why.json"
RUN = "run"  # the run's folder inside its archive entry


def archive_root(results_dir: str | os.PathLike) -> Path:
    return Path(results_dir) / ARCHIVE_DIR


def _new_entry(results_dir: Path, run_id: str) -> Path:
    """`archive/<run_id>/<n>/`, created here (n one more than the last; a concurrent archiver takes the next)."""
    folder = archive_root(results_dir) / run_id
    folder.mkdir(parents=True, exist_ok=True)
    n = max((int(name) for name in os.listdir(folder) if name.isdigit()), default=0) + 1
    while True:
        try:
            (folder / f"{n:04d}").mkdir()
            return folder / f"{n:04d}"
        except FileExistsError:
            n += 1


def _identity(path: Path) -> list[int] | None:
    """Which run folder this is (inode, size and mtime of its first manifest), to recognise it after a crash."""
    try:
        stat = (path / "manifest" / "s0000.parquet").stat()
    except OSError:
        return None
    return [stat.st_ino, stat.st_size, stat.st_mtime_ns]


def _move(source: Path, target: Path) -> None:
    try:
        os.rename(source, target)
    except FileNotFoundError:  # moved already (by a concurrent archiver, or before a crash)
        pass


def _complete(results_dir: Path, entry: Path, record: Mapping[str, Any]) -> None:
    """Do the entry's moves that are still to do: the companions, then the run (last: until then it has its
    result and is reused). Nothing moves unless the run in place is the one recorded and still has a result."""
    source = run_dir(results_dir, record["run_id"])
    if _identity(source) != record["identity"] or run_state(results_dir, record["run_id"]).result is None:
        return
    for name, path in record["companions"].items():
        if (results_dir / path).exists() and not (entry / name).exists():
            _move(results_dir / path, entry / name)
    _move(source, entry / RUN)


def archive_run(results_dir: str | os.PathLike, run_id: str, companions: Mapping[str, Path],
                why: Mapping[str, Any]) -> Path | None:
    """Move the run (which must have a result) and its `companions` (name → folder, e.g. its checkpoints) to a new
    archive entry, with `why` (JSON: e.g. the code that made it) in its record; returns the entry, or None when
    the run has no result (nothing moves)."""
    results_dir = Path(results_dir)
    identity = _identity(run_dir(results_dir, run_id))
    if identity is None or run_state(results_dir, run_id).result is None:
        return None
    entry = _new_entry(results_dir, run_id)
    record = {
        "run_id": run_id, "identity": identity, "archived_at": datetime.now(timezone.utc).isoformat(), **why,
        "companions": {name: os.path.relpath(path, results_dir) for name, path in companions.items()},
    }
    tmp = entry / f".{RECORD}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(record, indent=1, default=str))
    os.replace(tmp, entry / RECORD)
    _complete(results_dir, entry, record)
    return entry


def finish_archiving(results_dir: str | os.PathLike) -> list[Path]:
    """Complete the archive entries a crash interrupted (record written, run still in place); returns them."""
    results_dir = Path(results_dir)
    root = archive_root(results_dir)
    finished = []
    for record_path in sorted(root.glob(f"*/*/{RECORD}")) if root.is_dir() else []:
        entry = record_path.parent
        if (entry / RUN).exists():
            continue
        try:
            record = json.loads(record_path.read_text())
        except (OSError, ValueError):
            continue  # a damaged record names nothing to move: the run stays where it is
        _complete(results_dir, entry, record)
        if (entry / RUN).exists():
            finished.append(entry)
    return finished
