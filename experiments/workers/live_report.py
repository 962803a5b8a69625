"""Keeps a running sweep's HTML report current: the runner's side of the report process's protocol.

The report process (`harness sweep` passes `python -m analysis.report.live`, see its docstring) gets one line
per finished cell and answers each with a rewrite; lines that arrive during a rewrite are answered by the
next. It ignores the signals it gets with the runner's process group (Ctrl-C), so the runner can still ask for
a last rewrite; if the runner dies, the process sees the end of its input and exits. experiments never imports
analysis: the command is the only link.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path


class LiveReport:
    """`start()` early (the process imports while workers train), `cell_finished()` per finished cell, `settle()`
    before compacting the store (no rewrite reads it meanwhile), `close()` for the last rewrite."""

    def __init__(self, command: list[str] | None, log: Path) -> None:
        self.command, self.log = command, Path(log)
        self.process: subprocess.Popen | None = None
        self.sent = self.answered = 0
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
            self.process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                            text=True, bufsize=1)
        threading.Thread(target=self._read_answers, daemon=True).start()

    def _read_answers(self) -> None:
        try:
            for line in self.process.stdout:  # `wrote N partial|finished` or `failed N message`
                kind, answered, *message = line.rstrip("\n").split(" ", 2) + [""]
                if kind not in ("wrote", "failed") or not answered.isdigit():
                    continue  # not an answer: nothing to wait for
                with self._changed:
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
        self.start()
        if self.process is None or self._ended:
            return
        try:
            self.process.stdin.write("cell\n")
            self.process.stdin.flush()
            self.sent += 1
        except OSError:  # the process is gone; close() says so
            pass

    def settle(self) -> None:
        """Wait until every request so far has been answered (or the process has ended)."""
        with self._changed:
            self._changed.wait_for(lambda: self.answered >= self.sent or self._ended)

    def close(self) -> None:
        """The last page, then the end of the process; `error` says why the last page could not be written.
        A page that already shows the sweep finished is the last one (nothing it reads can change any more;
        compaction changes no query's rows), so it is not drawn again."""
        self.settle()
        if not (self.finished_page and self.answered == self.sent):
            self.cell_finished()
        if self.process is None:
            return
        self.settle()
        self._end()
        if self.answered < self.sent and self.error is None:
            self.error = f"the report process exited with code {self.process.returncode}; see {self.log}"

    def abandon(self) -> None:
        """Let the process go without a last rewrite or any wait: it finishes a rewrite in flight (atomic, like
        every rewrite), sees the end of its input and exits."""
        if self.process is not None:
            self._close_input()

    def _end(self) -> None:
        self._close_input()
        self.process.wait()

    def _close_input(self) -> None:
        try:
            self.process.stdin.close()
        except OSError:
            pass
