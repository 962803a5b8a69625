"""The fence a sweep worker hands to training (`harness.train.fencing.Fence`): a write into a cell is allowed
only while the worker's claim generation is the live one and the cell has no result.

The check reads the claims folder and the run's segments (a few small files, ~1 ms); `lost()` is the
heartbeat's flag, so the step loop pays no I/O for it.
"""

from __future__ import annotations

import time
from pathlib import Path

import db
from experiments.workers.claims import Claim, Heartbeat
from harness.train.fencing import FenceLost


class ClaimFence:
    """The fence of one held claim; `retries` decides when failures make the cell finished."""

    def __init__(self, results_dir: Path, claim: Claim, heartbeat: Heartbeat, retries: int) -> None:
        self.results_dir, self.claim, self.heartbeat, self.retries = Path(results_dir), claim, heartbeat, retries
        self.generation = claim.generation
        self.checks, self.seconds = 0, 0.0  # what the fence cost this cell (the worker logs it)
        self._lost = False

    def why_not(self) -> str | None:
        """Why this worker may no longer write into the cell, or None while it may."""
        if self.claim.lost():
            return f"claim {self.generation} was taken over"
        state = db.run_state(self.results_dir, self.claim.run_id)
        if state.result is not None:
            return f"the run is {state.result} already"
        if state.failures > self.retries:
            return f"the run failed {state.failures} times already"
        return None

    def check(self, what: str) -> None:
        started = time.perf_counter()
        reason = self.why_not()
        self.checks, self.seconds = self.checks + 1, self.seconds + time.perf_counter() - started
        if reason is not None:
            self._lost = True
            raise FenceLost(f"not writing ({what}): {reason}")

    def lost(self) -> bool:
        return self._lost or self.heartbeat.lost
