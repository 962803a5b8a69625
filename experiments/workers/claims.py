"""The claim protocol: which worker trains which cell, through files in the results directory only, so it
works the same for processes on one machine and for nodes sharing a filesystem (after Marin's claim_and_run).
It is a lease with fencing tokens, as in Chubby's sequencers and etcd's leases: the generation is the token.

A cell's claims live in `<results>/claims/<run_id>/`. Claim `g` is the file `g`, created exclusively
(hard link of a complete temp file: it appears whole or not at all). The live claim is the highest `g`.
Its holder's heartbeat thread rewrites `g.beat` (atomically replaced; a beat counter, step, steps) every
few seconds, whatever the training thread is doing, and marks it released when done with the cell.
A claim is free once released, at once when its holder was on this host and is gone, and after its beat
has not changed for `stale_after` seconds *as the observer measures it* on its own monotonic clock
(`BeatWatcher`): no file time is compared with another host's clock, so clock skew and cached file
attributes can neither free a live claim nor pin a dead one. A holder on any host that stops beating (a
stalled or hung process looks the same) is taken over after `stale_after`.
Anyone may take over a free claim `g` by creating `g + 1`, which only one claimant can do. The holder of
`g` then writes nothing more into the cell (every write of a segment, checkpoint or failure checks the
generation first: `experiments.workers.fence`), and the store ignores a segment opened under a superseded
generation (`db/segments.py`). Nothing is ever deleted, so no race can free a cell twice.
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
    """What a claim file says, and its heartbeat (`beat`: the beat file's text, which changes at every beat)."""

    run_id: str
    generation: int
    host: str
    pid: int
    pid_start: str | None
    worker: str
    sweep: str | None
    beat: str | None
    step: int | None
    steps: int | None
    released: bool = False

    def holder_gone(self) -> bool:
        """The claimant ran on this host and is no longer alive (a reused pid has another start time)."""
        if self.host != socket.gethostname():
            return False
        return not pid_alive(self.pid) or (self.pid_start is not None and _process_start(self.pid) != self.pid_start)


class BeatWatcher:
    """Tells a stale claim from a live one by watching its beat change, on this process's monotonic clock.

    A claim is stale when released, when its holder on this host is gone, or when its beat has not changed
    for `stale_after` seconds of watching. A claim first seen now counts as fresh: a new observer waits a
    full `stale_after` before it takes over a holder on another host."""

    def __init__(self, stale_after: float, clock=time.monotonic) -> None:
        self.stale_after, self.clock = stale_after, clock
        self._seen: dict[tuple[str, int], tuple[str | None, float]] = {}

    def stale(self, info: ClaimInfo) -> bool:
        if info.released or info.holder_gone():
            return True
        key, now = (info.run_id, info.generation), self.clock()
        seen = self._seen.get(key)
        if seen is None or seen[0] != info.beat:
            self._seen[key] = (info.beat, now)
            return False
        return now - seen[1] >= self.stale_after


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
    try:
        text = (folder / f"{g}{BEAT_SUFFIX}").read_text()
        beat = json.loads(text)
    except (OSError, json.JSONDecodeError):
        text, beat = None, {}
    return ClaimInfo(run_id, g, record["host"], record["pid"], record.get("pid_start"), record.get("worker", ""),
                     record.get("sweep"), text, beat.get("step"), beat.get("steps"), bool(beat.get("released")))


class Claim:
    """A held claim; `beat(step, steps)` refreshes it, `lost()` says whether someone took it over."""

    def __init__(self, results_dir: Path, run_id: str, generation: int) -> None:
        self.folder = claim_dir(results_dir, run_id)
        self.run_id = run_id
        self.generation = generation
        self._beats = 0

    def beat(self, step: int | None = None, steps: int | None = None, released: bool = False) -> None:
        self._beats += 1  # observers see a beat as a change of the file's text, never by its time
        path = self.folder / f"{self.generation}{BEAT_SUFFIX}"
        record = {"beat": self._beats, "step": step, "steps": steps, "time": time.time(), "released": released}
        os.replace(_write_json(path, record), path)

    def lost(self) -> bool:
        """A newer claim exists: our heartbeat went stale (a stalled filesystem, a paused process)."""
        return _generations(self.folder)[-1] != self.generation

    def release(self, step: int | None = None, steps: int | None = None) -> bool:
        """Mark the claim released, unless it was lost (a superseded generation's beat is no one's to write)."""
        if self.lost():
            return False
        self.beat(step, steps, released=True)
        return True


def try_claim(results_dir: Path, run_id: str, *, worker: str, sweep: str | None, watcher: BeatWatcher) -> Claim | None:
    """Claim the cell if nobody holds it, or take over a stale claim; None when a live claimant has it or
    another worker won the race."""
    folder = claim_dir(results_dir, run_id)
    existing = current_claim(results_dir, run_id)
    if existing is not None and not watcher.stale(existing):
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
    """Beats a claim every `every` seconds from a daemon thread, with the cell's current step, independent of
    how long a step, a validation or a checkpoint takes. It notices a lost claim (`lost`) and stops beating
    then. A failing beat (a filesystem hiccup) is skipped; a long outage makes the claim stale, as it should.
    Leaving the `with` block releases the claim if it is still held."""

    def __init__(self, claim: Claim, every: float, steps: int, also=None) -> None:
        self.claim, self.every, self.steps, self.also = claim, every, steps, also  # also(): e.g. Optuna's heartbeat
        self.step: int | None = None
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{claim.run_id}", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                if self.claim.lost():
                    self.lost = True
                    return
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
        self.claim.release(self.step, self.steps)
