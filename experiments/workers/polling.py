"""How often a worker with nothing to train looks again: at cells others hold (if their workers die, the cells
come back to it) and at the trials of a search that others run."""

from __future__ import annotations

POLL_EVERY = 1.0
POLL_FLOOR = 0.1  # seconds between looks at a few cells others hold: the last one's end is the sweep's end


def poll_interval(waiting: int) -> float:
    """Seconds before a worker with nothing to train looks again at the `waiting` cells others hold: soon when
    few are left (at a sweep's end its last exit waits on this look), at most POLL_EVERY; either way a worker
    reads at most about ten claims a second."""
    return min(POLL_EVERY, POLL_FLOOR * max(1, waiting))
