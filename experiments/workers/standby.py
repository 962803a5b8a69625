"""The standby hand-off: a worker the local runner (experiments.backends.local_workers) starts before the sweep
is planned imports torch and Lightning while the launcher plans, then waits for its arguments on stdin. Until
they come it has touched nothing in the results directory, and its output goes to the runner's temp file."""

from __future__ import annotations

import json
import os
import sys


def await_command() -> list[str] | None:
    """On standby: wait for the runner's line on stdin, {"argv": [...], "log": path}, move stdout and stderr from
    the runner's temp file to that log (what was printed so far first) and return the arguments. None: the input
    ended first (the launch ended), nothing was touched."""
    line = sys.stdin.readline()
    if not line.strip():
        return None
    given = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    os.lseek(1, 0, os.SEEK_SET)  # stdout and stderr share the temp file and its offset
    printed = b"".join(iter(lambda: os.read(1, 1 << 16), b""))
    fd = os.open(given["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, printed)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    return given["argv"]
