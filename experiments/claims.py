"""The claim protocol: which worker trains which cell, through files in the results directory only, so it
works the same for processes on one machine and for nodes sharing a filesystem (after Marin's claim_and_run).

A cell's claims live in `<results>/claims/<run_id>/`. Claim `g` is the file `g`, created exclusively
(hard link of a complete temp file: it appears whole or not at all). The live claim is the highest `g`.
Its holder refreshes `g.beat` (atomically replaced: step, steps) every few seconds and marks it released
when done with the cell; a claim is free once released, when its heartbeat is older than `stale_after`, or
at once when its holder was on this host and is gone.
Anyone may take over a stale claim `g` by creating `g + 1`, which only one claimant can do; a slow
holder that sees a newer claim stops. Nothing is ever deleted, so no race can free a cell twice.
Whether a cell still needs work is read from the results store (`db.run_state`), never from claims.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from db.liveness import pid_alive

CLAIMS_DIR = "claims"
BEAT_SUFFIX = ".beat"


def _process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (tells a reused pid from the claimant)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[-1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _write_json(path: Path, record: dict[str, Any]) -> Path:
    tmp = path.with_name(f".{path.name}.tmp-{socket.gethostname()}-{os.getpid()}-{threading.get_ident()}")
    tmp.write_text(json.dumps(record))
    return tmp


@dataclass(frozen=True)
class ClaimInfo:
    """What a claim file says, and its heartbeat."""

    generation: int
    host: str
    pid: int
    pid_start: str | None
    worker: str
    sweep: str | None
    beat_age: float
    step: int | None
    steps: int | None
    released: bool = False

    def holder_gone(self) -> bool:
        """The claimant ran on this host and is no longer alive (a reused pid has another start time)."""
        if self.host != socket.gethostname():
            return False
        return not pid_alive(self.pid) or (self.pid_start is not None and _process_start(self.pid) != self.pid_start)

    def stale(self, stale_after: float) -> bool:
        """Free to take: released by its holder, its holder gone, or no heartbeat for `stale_after` seconds."""
        return self.released or self.holder_gone() or self.beat_age > stale_after


def claim_dir(results_dir: Path, run_id: str) -> Path:
    return Path(results_dir) / CLAIMS_DIR / run_id


def _generations(folder: Path) -> list[int]:
    try:
        return sorted(int(name) for name in os.listdir(folder) if name.isdigit())
    except FileNotFoundError:
        return []


def current_claim(results_dir: Path, run_id: str) -> ClaimInfo | None:
    """The live (highest) claim of a cell, or None when nobody ever claimed it."""
    folder = claim_dir(results_dir, run_id)
    generations = _generations(folder)
    if not generations:
        return None
    g = generations[-1]
    try:
        record = json.loads((folder / str(g)).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    beat_path = folder / f"{g}{BEAT_SUFFIX}"
    try:
        beat = json.loads(beat_path.read_text())
        beat_time = beat_path.stat().st_mtime
    except (OSError, json.JSONDecodeError):
        beat, beat_time = {}, (folder / str(g)).stat().st_mtime
    return ClaimInfo(g, record["host"], record["pid"], record.get("pid_start"), record.get("worker", ""),
                     record.get("sweep"), max(0.0, time.time() - beat_time), beat.get("step"), beat.get("steps"),
                     bool(beat.get("released")))


class Claim:
    """A held claim; `beat(step, steps)` refreshes it, `lost()` says whether someone took it over."""

    def __init__(self, results_dir: Path, run_id: str, generation: int) -> None:
        self.folder = claim_dir(results_dir, run_id)
        self.run_id = run_id
        self.generation = generation

    def beat(self, step: int | None = None, steps: int | None = None, released: bool = False) -> None:
        path = self.folder / f"{self.generation}{BEAT_SUFFIX}"
        os.replace(_write_json(path, {"step": step, "steps": steps, "time": time.time(), "released": released}), path)

    def lost(self) -> bool:
        """A newer claim exists: our heartbeat went stale (a stalled filesystem, a paused process)."""
        return _generations(self.folder)[-1] != self.generation


def try_claim(results_dir: Path, run_id: str, *, worker: str, sweep: str | None, stale_after: float) -> Claim | None:
    """Claim the cell if nobody holds it, or take over a stale claim; None when a live claimant has it or
    another worker won the race."""
    folder = claim_dir(results_dir, run_id)
    existing = current_claim(results_dir, run_id)
    if existing is not None and not existing.stale(stale_after):
        return None
    generation = 0 if existing is None else existing.generation + 1
    folder.mkdir(parents=True, exist_ok=True)
    record = {"host": socket.gethostname(), "pid": os.getpid(), "pid_start": _process_start(os.getpid()),
              "worker": worker, "sweep": sweep, "claimed_at": time.time()}
    tmp = _write_json(folder / str(generation), record)
    try:
        os.link(tmp, folder / str(generation))
    except FileExistsError:
        return None
    finally:
        tmp.unlink()
    claim = Claim(results_dir, run_id, generation)
    claim.beat()
    return claim


class Heartbeat:
    """Refreshes a claim every `every` seconds from a daemon thread, with the cell's current step. A failing
    beat (a filesystem or database hiccup) is skipped; a long outage makes the claim stale, as it should."""

    def __init__(self, claim: Claim, every: float, steps: int, also=None) -> None:
        self.claim, self.every, self.steps, self.also = claim, every, steps, also  # also(): e.g. Optuna's heartbeat
        self.step: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{claim.run_id}", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.claim.beat(self.step, self.steps)
                if self.also is not None:
                    self.also()
            except Exception:  # the next beat tries again
                pass

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        """Stop beating and release the claim: the store now says whether the cell needs more work."""
        self._stop.set()
        self._thread.join()
        self.claim.beat(self.step, self.steps, released=True)
