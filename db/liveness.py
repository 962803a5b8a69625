"""Telling a crashed run from a running one: a segment with no status whose writer process is gone.

Only writers on this host can be checked (by pid; a killed writer its parent has not reaped yet, a
zombie, counts as gone); runs written elsewhere without a status stay
`running`. A pid reused by an unrelated process makes a crashed run look running until that process ends.
"""

from __future__ import annotations

import os
import socket


def _zombie(pid: int) -> bool:
    """Whether `pid` has exited but its parent has not reaped it yet (Linux /proc; False where unknown)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[-1].split()  # the command name in (...) may hold spaces
    except OSError:
        return False
    return bool(fields) and fields[0] in (b"Z", b"X")


def pid_alive(pid: int) -> bool:
    """Whether a live process with this pid exists on this host; a killed, not yet reaped one (zombie) is dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        pass
    return not _zombie(pid)


def dead_segments(con) -> list[tuple[str, int]]:
    """(run_id, segment) of each run's latest counting segment that has no status and whose local writer is gone."""
    rows = con.execute(
        "SELECT m.run_id, m.segment, m.host, m.pid FROM _counting m "
        "JOIN (SELECT run_id, max(segment) AS segment FROM _counting GROUP BY run_id) l USING (run_id, segment) "
        "WHERE m.status IS NULL"
    ).fetchall()
    here = socket.gethostname()
    return [(run_id, segment) for run_id, segment, host, pid in rows
            if host == here and pid is not None and not pid_alive(pid)]
