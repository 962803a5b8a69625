"""The workers' options that every launcher shares, their defaults and their check: how often a worker beats,
how long a beat may stay unchanged before its cell is taken over, how often a cell that raised is retried.
This module imports nothing but errors/, so `harness sweep`'s parser shows these defaults at no start-up cost."""

from __future__ import annotations

from errors import ConfigError

HEARTBEAT_EVERY = 2.0  # seconds between beats; also how fresh the live display's step counts are
MIN_BEATS = 5  # `stale_after` must span this many beats, so a late beat or two never frees a live claim
DEFAULT_STALE_AFTER = 60.0
DEFAULT_RETRIES = 1  # retries of a cell that raised: it is failed (finished) once it raised retries + 1 times


def check_stale_after(stale_after: float, heartbeat_every: float = HEARTBEAT_EVERY) -> None:
    """ConfigError unless `stale_after` spans at least MIN_BEATS heartbeat intervals."""
    if not heartbeat_every > 0:
        raise ConfigError(f"--heartbeat-every {heartbeat_every:g} is invalid: must be > 0 seconds.")
    minimum = MIN_BEATS * heartbeat_every
    if not stale_after >= minimum:
        raise ConfigError(f"--stale-after {stale_after:g} is invalid: must be ≥ {minimum:g} seconds ({MIN_BEATS} "
                          f"heartbeats of {heartbeat_every:g} s), or a healthy worker could lose its cell.")
