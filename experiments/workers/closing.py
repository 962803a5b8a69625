"""Closing a finished sweep, once: compact the store and draw the report's last page, whoever sees the sweep
finish first (on SLURM: the array's task whose worker found no cell left, or `harness sweep --wait/--follow`).

Compaction only merges the shards of closed segments (db/compact.py), and a finished sweep has no writer left
but one that lost its claim and writes nothing more (fencing): so closing never runs while a worker writes.
Two closers must not compact at once, so closing is claimed like a cell (`claims/sweep-close.<sweep>/`,
beaten while it runs, taken over when its closer dies); `logs/closed.json` records which cells were closed,
so a later look at the same finished sweep closes nothing again, and a sweep that grew (more seeds) closes again.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import socket
import sys
from pathlib import Path

import db
from experiments.workers.claims import BeatWatcher, Heartbeat, try_claim
from experiments.workers.live_report import LiveReport
from experiments.workers.options import HEARTBEAT_EVERY
from experiments.workers.progress import ProgressReader


class Closing(enum.Enum):
    """What one look at closing a sweep found or did (`close_sweep`)."""

    CLOSED = "closed"  # closed here, now: the store compacted and the report's last page drawn
    ALREADY = "already"  # these cells were closed before
    BUSY = "busy"  # another closer is at it: ask again later
    UNFINISHED = "unfinished"  # some cell is not finished yet


# One watcher per sweep this process closes, kept between its looks: a new one would see a stopped beat as fresh.
_watchers: dict[tuple[str, str], BeatWatcher] = {}


def _marker(results_dir: Path, sweep: str) -> Path:
    return db.sweep_dir(results_dir, sweep) / "logs" / "closed.json"


def cells_digest(reader: ProgressReader) -> str:
    """What a closing covers: the sweep's cells (their run ids)."""
    return hashlib.sha256("\n".join(sorted(c.run_id for c in reader.cells)).encode()).hexdigest()[:16]


def closed(results_dir: Path, sweep: str, digest: str) -> bool:
    """Whether these cells of the sweep were closed already."""
    try:
        return json.loads(_marker(results_dir, sweep).read_text()).get("cells") == digest
    except (OSError, ValueError):
        return False


def close_sweep(results_dir: Path, sweep: str, *, retries: int, stale_after: float, report: list[str] | None,
                closer: str, live: LiveReport | None = None) -> Closing:
    """Close the sweep if every cell is finished and nobody did. While another closer is at it, BUSY; one on
    another host that died is taken over once its beat has not changed for `stale_after` between this process's
    looks. `report`: the report process's command (None: no report); `live`: one already running (its last page
    is drawn after the compaction)."""
    results_dir = Path(results_dir)
    reader = ProgressReader(results_dir, sweep, retries, stale_after)
    if reader.read().done < reader.total:
        return Closing.UNFINISHED
    digest = cells_digest(reader)
    if closed(results_dir, sweep, digest):
        return Closing.ALREADY
    watcher = _watchers.setdefault((str(results_dir), sweep), BeatWatcher(stale_after))
    claim = try_claim(results_dir, f"sweep-close.{sweep}", worker=closer, sweep=sweep, watcher=watcher)
    if claim is None:
        return Closing.BUSY
    with Heartbeat(claim, HEARTBEAT_EVERY, 0):
        if closed(results_dir, sweep, digest):  # closed between our look and our claim
            return Closing.ALREADY
        live = live or LiveReport(report, db.sweep_dir(results_dir, sweep) / "logs" / "report.log")
        live.start()
        live.hold()  # nothing reads the store while it is compacted
        from db.compact import compact

        compact(results_dir, on_wait=lambda holder: print(f"sweep {sweep}: waiting for another compaction of the "
                                                          f"store ({holder})", file=sys.stderr, flush=True))
        live.close()
        marker = _marker(results_dir, sweep)
        marker.parent.mkdir(parents=True, exist_ok=True)
        tmp = marker.with_name(f".closed.tmp-{os.getpid()}")
        tmp.write_text(json.dumps({"cells": digest, "by": closer, "host": socket.gethostname(),
                                   "report_error": live.error}))
        os.replace(tmp, marker)
    return Closing.CLOSED


def closing_error(results_dir: Path, sweep: str) -> str | None:
    """Why the last closing could not write the report's last page, or None."""
    try:
        return json.loads(_marker(results_dir, sweep).read_text()).get("report_error")
    except (OSError, ValueError):
        return None
