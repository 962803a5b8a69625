"""Telling a crashed run from a running one: a segment with no status whose writer process is gone.

Only writers on this host can be checked (by pid); runs written elsewhere without a status stay
`running`. A pid reused by an unrelated process makes a crashed run look running until that process ends.
"""

from __future__ import annotations

import os
import socket


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this host."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def dead_segments(con) -> list[tuple[str, int]]:
    """(run_id, segment) of each run's latest segment that has no status and whose local writer is gone."""
    rows = con.execute(
        "SELECT m.run_id, m.segment, m.host, m.pid FROM _manifests m "
        "JOIN (SELECT run_id, max(segment) AS segment FROM _manifests GROUP BY run_id) l USING (run_id, segment) "
        "ANTI JOIN _status s USING (run_id, segment)"
    ).fetchall()
    here = socket.gethostname()
    return [(run_id, segment) for run_id, segment, host, pid in rows if host == here and pid is not None and not pid_alive(pid)]
