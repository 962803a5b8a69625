"""The report process's children (analysis.report.live_pages), seen from /proc: a partial page being drawn, found
once it has lowered its priority, and stopped to stand for one the workers starve of CPU."""

import os
import signal
import time
from pathlib import Path

from analysis.report.live_pages import NICE


def children(pid: int) -> list[int]:
    """The pids of `pid`'s children (the parent pid is the 2nd field after the command name in /proc/PID/stat)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):  # it ended meanwhile
            pass
    return found


def partial_page_child(pid: int) -> int:
    """The child of report process `pid` drawing a partial page, once it runs NICE steps below its parent (the
    process imports the analysis stack first: seconds, more on a busy machine; a hang ends at the test's timeout).
    Relative to the parent: under `nice pytest` the child's os.nice(NICE) adds to what it inherited."""
    niced = min(19, os.getpriority(os.PRIO_PROCESS, pid) + NICE)
    while True:
        for child in children(pid):
            try:
                if os.getpriority(os.PRIO_PROCESS, child) == niced:
                    return child
            except OSError:
                pass
        time.sleep(0.01)


def starve(pid: int) -> int:
    """Stop report process `pid`'s partial page child (as busy workers would leave it no CPU); its pid."""
    child = partial_page_child(pid)
    os.kill(child, signal.SIGSTOP)
    return child


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()
