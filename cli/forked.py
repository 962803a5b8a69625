"""Run a function in a forked child while this process does something slow, for a command's latency.

`harness compare` spends about one second importing scipy.stats, in Python bytecode that holds the GIL, and
about half a second reading the store: in a thread the two serialize on the GIL; in a child process they
take a core each. The child sends back its return value, or one of the `expected` exceptions (user errors,
raised here as they were there); any other failure runs the function in this process instead, so a bug
shows its own traceback. A user error need not wait for the slow work: the child signals it (SIGUSR1), the
work in the block is abandoned, and `result()`, called after the block, raises it (an unknown sweep's
message in half a second, not after scipy's import). Only on Linux, and only with no other thread running:
elsewhere (macOS's system libraries are not fork-safe) the function simply runs here.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from types import FrameType
from typing import Any, Callable

RETRY = "retry"  # the child could not answer: call the function here


class _Answered(Exception):
    """Raised in the block when the child has answered with a user error: the rest of the block is moot."""


class Forked:
    """`with Forked(function, *args, expected=(...)) as job: <slow work>` then `value = job.result()` (after
    the block, so that a user error from the child can cut the slow work short)."""

    def __init__(self, function: Callable, *args, expected: tuple[type[BaseException], ...] = ()) -> None:
        self.function, self.args, self.expected = function, args, expected
        self.pid: int | None = None
        self.read: int | None = None
        self._in_block = self._answered = False
        self._previous_handler: Callable[[int, FrameType | None], Any] | int | None = None

    def __enter__(self) -> Forked:
        # Forking a process with other threads can copy a lock some thread holds; never do it then.
        if sys.platform != "linux" or threading.active_count() > 1:
            return self
        sys.stdout.flush()
        sys.stderr.flush()  # else the child's exit path could write our buffered output a second time
        self._previous_handler = signal.signal(signal.SIGUSR1, self._on_answer)
        self.read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.read)
            signal.signal(signal.SIGUSR1, signal.SIG_DFL)
            self._answer(write)
        os.close(write)
        # Last, with no call after it (Python runs a signal's handler only as a call returns, a loop jumps back or a
        # function begins): an answer that comes sooner must not raise here, where _Answered would escape the `with`
        # that never began. The block then runs to its end and result() raises the answer.
        self._in_block = True
        return self

    def _on_answer(self, signum, frame) -> None:
        # Only in the block (after it, result() reads the answer), and not as __exit__ begins: raised there,
        # _Answered would escape the `with` statement instead of ending its block.
        if self._in_block and frame is not None and frame.f_code is not Forked.__exit__.__code__:
            self._in_block, self._answered = False, True
            raise _Answered

    def _answer(self, write: int) -> None:
        """In the child: send (kind, value) and leave without running the parent's exit handlers."""
        try:
            try:
                answer = ("value", self.function(*self.args))
            except self.expected as error:
                answer = ("error", error)
            payload = pickle.dumps(answer)
        except BaseException:  # a bug, or Ctrl-C: the parent decides
            answer, payload = (RETRY, None), pickle.dumps((RETRY, None))
        try:
            with os.fdopen(write, "wb") as sink:
                sink.write(payload)
            if answer[0] == "error":
                os.kill(os.getppid(), signal.SIGUSR1)  # the parent's slow work is moot now
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(0)

    def result(self):
        """The function's value (raising what it raised, if expected); computed here when there is no child."""
        self._in_block = False
        if self.pid is None:
            return self.function(*self.args)
        with os.fdopen(self.read, "rb") as source:
            data = source.read()
        self.read = None
        self._reap()
        kind, value = pickle.loads(data) if data else (RETRY, None)  # no data: the child died
        if kind == "error":
            raise value
        return value if kind == "value" else self.function(*self.args)

    def _reap(self) -> None:
        if self.read is not None:  # left early: the child's write fails instead of blocking on a full pipe
            os.close(self.read)
            self.read = None
        if self.pid is not None:
            os.waitpid(self.pid, 0)  # the child's signal, if any, was delivered before it exited
            self.pid = None
        if self._previous_handler is not None:
            signal.signal(signal.SIGUSR1, self._previous_handler)
            self._previous_handler = None

    def __exit__(self, kind, error, traceback) -> bool:
        """Leaving normally or because the child answered with an error: the answer waits for result(). Leaving
        on any other exception: the child is let go. (_Answered may reach here as another exception: raised in
        an extension module's initialization, it becomes ImportError('initialization failed').)"""
        self._in_block = False
        if kind is not None and not self._answered:
            self._reap()
        return self._answered
