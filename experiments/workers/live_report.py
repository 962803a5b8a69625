"""Keeps a running sweep's HTML report current: the runner's side of the report process's protocol.

The report process (`harness sweep` passes `python -m analysis.report.live`, see its docstring) gets a `cell`
line per finished cell and answers each with a partial page (drawn at low priority); lines that arrive during
a rewrite are answered by the next. `hold` before a compaction makes it abandon a partial page in flight and
read nothing; `last` on close abandons one too and draws the last page at once. It ignores the signals it gets
with the runner's process group (Ctrl-C), so the runner can still ask for the last page; if the runner dies,
the process sees the end of its input and exits. experiments never imports analysis: the command is the only
link.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import IO, cast


class LiveReport:
    """`start()` early (the process imports while workers train), `cell_finished()` per finished cell, `hold()`
    before compacting the store (nothing reads it meanwhile), `close()` for the last page."""

    def __init__(self, command: list[str] | None, log: Path) -> None:
        self.command, self.log = command, Path(log)
        self.process: subprocess.Popen[str] | None = None
        self.sent = self.answered = self.held = 0
        self.error: str | None = None
        self.finished_page = False  # the last page written shows the sweep finished: it is the final page
        self._ended = False
        self._changed = threading.Condition()

    def start(self) -> None:
        """Start the report process (once; nothing when there is no command)."""
        if self.command is None or self.process is not None:
            return
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "a") as log:  # the child keeps its own copy of the descriptor
            self.process = process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                                      stderr=log, text=True, bufsize=1)
        threading.Thread(target=self._read_answers, args=(_pipe(process.stdout),), daemon=True).start()

    def _read_answers(self, answers: IO[str]) -> None:
        try:
            for line in answers:  # `wrote N partial|finished`, `failed N message` or `held N`
                kind, answered, *message = line.rstrip("\n").split(" ", 2) + [""]
                if kind not in ("wrote", "failed", "held") or not answered.isdigit():
                    continue  # not an answer: nothing to wait for
                with self._changed:
                    if kind == "held":
                        self.held += 1
                        self._changed.notify_all()
                        continue
                    self.answered = int(answered)
                    self.error = (message[0] or "failed") if kind == "failed" else None
                    self.finished_page = kind == "wrote" and message[0] == "finished"
                    self._changed.notify_all()
        finally:  # whatever happened here, nobody may wait for an answer that cannot come
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def cell_finished(self) -> None:
        """Ask for a rewrite that includes the cell that just finished."""
        if self._send("cell"):
            self.sent += 1

    def _send(self, line: str) -> bool:
        """Send one line (starting the process first); False when the process is gone (close() says so)."""
        self.start()
        if self.process is None or self._ended:
            return False
        try:
            _pipe(self.process.stdin).write(f"{line}\n")
            _pipe(self.process.stdin).flush()
        except OSError:
            return False
        return True

    def hold(self) -> None:
        """Return once the report process reads nothing from the store (a partial page being drawn is
        abandoned; its cells are answered by the next page): call before compacting the store. It reads only
        while a request is unanswered."""
        with self._changed:
            held, busy = self.held, self.answered < self.sent
        if busy and self._send("hold"):
            with self._changed:
                self._changed.wait_for(lambda: self.held > held or self._ended)

    def settle(self) -> None:
        """Wait until every request so far has been answered (or the process has ended)."""
        with self._changed:
            self._changed.wait_for(lambda: self.answered >= self.sent or self._ended)

    def close(self) -> None:
        """The last page, then the end of the process; `error` says why the last page could not be written.
        A page that already shows the sweep finished is the last one (nothing it reads can change any more;
        compaction changes no query's rows), so it is not drawn again; a partial page still being drawn is
        abandoned for the last one."""
        if not (self.finished_page and self.answered == self.sent) and self._send("last"):
            self.sent += 1
        if self.process is None:
            return
        self.settle()
        self._end(self.process)
        if self.answered < self.sent and self.error is None:
            self.error = f"the report process exited with code {self.process.returncode}; see {self.log}"

    def abandon(self) -> None:
        """Let the process go without a last page or any wait: it sees the end of its input, abandons a partial
        page in flight, redraws the last one as interrupted if it showed cells waiting and none training, and exits."""
        if self.process is not None:
            self._close_input(self.process)

    def _end(self, process: subprocess.Popen[str]) -> None:
        self._close_input(process)
        process.wait()

    def _close_input(self, process: subprocess.Popen[str]) -> None:
        try:
            _pipe(process.stdin).close()
        except OSError:
            pass


def _pipe(stream: IO[str] | None) -> IO[str]:
    """A stream the report process was started with as a pipe (typeshed types every Popen's as Optional)."""
    return cast(IO[str], stream)
