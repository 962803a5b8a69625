"""The live report's pages: a partial one drawn by a forked child at low priority while the sweep runs, the last
one drawn at once, in the report process itself, when its runner ends (analysis.report.live).

A partial page must not slow the workers, so its child runs at nice `NICE` and takes only the CPU they leave;
the report process stays at normal priority, idle, so that when the runner ends it can abandon a partial page
still being drawn (its content is out of date by then: the child is killed and its temp file removed) and draw
the last page without waiting behind the workers' leftovers. Forking is safe here: the process has imported
the analysis stack but holds no DuckDB connection or thread pool of its own until it draws a page itself, and
from then on it draws every page itself (`analysis.report.live.LivePages.forking`).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

NICE = 10
ANSWER_MAX = 2048  # a child's answer goes through a pipe in one write (atomic under PIPE_BUF)


def log(message: str) -> None:
    """One line of the report log: when (UTC, when the rewrite ended), then what."""
    print(f"{datetime.now(timezone.utc).isoformat(timespec='milliseconds')} report: {message}", file=sys.stderr,
          flush=True)


@dataclass(frozen=True)
class Drawn:
    """What a page shows: `kind` 'partial' (cells wait or run), 'finished' or 'failed'; `idle`: cells wait and
    none trains (the page reads as interrupted once the runner is known to have ended); `message`: why it failed."""

    kind: str
    idle: bool = False
    message: str = ""

    def encode(self) -> bytes:
        return f"{self.kind} {int(self.idle)} {self.message}".encode()[:ANSWER_MAX]

    @staticmethod
    def decode(data: bytes) -> "Drawn":
        kind, idle, message = (data.decode(errors="replace") + "  ").split(" ", 2)
        return Drawn(kind, idle == "1", message.strip())


def draw(results_dir: str, sweep: str, out: Path, *, runner: bool, tag: str = "") -> Drawn:
    """Render the sweep's report and replace `out` with it (temp files named with `tag`); `runner`: whether the
    runner is alive. A failure is logged and returned, never raised: the report is a view."""
    from analysis.reading.source import INTERRUPTED_STATE
    from analysis.report.write import render_report, write_page

    started = time.monotonic()
    try:
        rendered = render_report(results_dir, sweep, runner=runner)
        write_page(rendered.page(), out, tag=tag)
    except Exception as error:
        message = " ".join(f"{type(error).__name__}: {error}".split())
        log(f"failed after {time.monotonic() - started:.1f} s: {message}")
        return Drawn("failed", message=message)
    info = rendered.info
    stopped = "; interrupted, the page no longer reloads" if info.state == INTERRUPTED_STATE else ""
    log(f"{info.progress()}{stopped} in {time.monotonic() - started:.1f} s → {out}")
    return Drawn("partial" if info.running else "finished", idle=info.running and not info.counts.get("running"))


class PartialPage:
    """A partial page (the runner alive) drawn by a child process at nice NICE, answering `lines` requests."""

    def __init__(self, results_dir: str, sweep: str, out: Path, lines: int) -> None:
        self.out, self.lines = out, lines
        read, write = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()  # nothing buffered may be written twice
        self.pid = os.fork()
        if self.pid == 0:
            os.close(read)
            _draw_in_child(results_dir, sweep, out, write)
        os.close(write)
        self.fd = read

    def outcome(self) -> Drawn:
        """What the child drew (call once `fd` is readable: the child has answered or died)."""
        data = os.read(self.fd, ANSWER_MAX)
        os.close(self.fd)
        _, status = os.waitpid(self.pid, 0)
        return Drawn.decode(data) if data else Drawn("failed",
                                                     message=f"the rewrite's process ended with status {status}")

    def abandon(self) -> None:
        """Kill the child (a stopped or starved one too), and remove the temp page it may have left."""
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        for temp in self.out.parent.glob(f".{self.out.name}.{_tag(self.pid)}*.tmp"):
            temp.unlink(missing_ok=True)


def _tag(pid: int) -> str:
    return f"{pid}-"  # mkstemp's random part has no '-': no other writer's temp file starts with this


def _draw_in_child(results_dir: str, sweep: str, out: Path, answer_fd: int) -> None:
    """The child's whole life: lower its priority, draw, answer through the pipe, exit without clean-up (the
    parent's buffers and atexit handlers are not the child's to run)."""
    try:
        os.nice(NICE)
        drawn = draw(results_dir, sweep, out, runner=True, tag=_tag(os.getpid()))
        os.write(answer_fd, drawn.encode())
    finally:
        os._exit(0)
