"""Run a function in a forked child while this process does something slow, for a command's latency.

`harness compare` spends about one second importing scipy.stats, in Python bytecode that holds the GIL, and
about half a second reading the store: in a thread the two serialize on the GIL; in a child process they
take a core each. The child sends back its return value, or one of the `expected` exceptions (user errors,
raised here as they were there); any other failure runs the function in this process instead, so a bug
shows its own traceback. Only on Linux, and only with no other thread running: elsewhere (macOS's system
libraries are not fork-safe) the function simply runs here.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading
from typing import Callable

RETRY = "retry"  # the child could not answer: call the function here


class Forked:
    """`with Forked(function, *args, expected=(...)) as job: <slow work>; value = job.result()`."""

    def __init__(self, function: Callable, *args, expected: tuple[type[BaseException], ...] = ()) -> None:
        self.function, self.args, self.expected = function, args, expected
        self.pid: int | None = None
        self.read: int | None = None

    def __enter__(self) -> Forked:
        # Forking a process with other threads can copy a lock some thread holds; never do it then.
        if sys.platform != "linux" or threading.active_count() > 1:
            return self
        sys.stdout.flush()
        sys.stderr.flush()  # else the child's exit path could write our buffered output a second time
        self.read, write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.read)
            self._answer(write)
        os.close(write)
        return self

    def _answer(self, write: int) -> None:
        """In the child: send (kind, value) and leave without running the parent's exit handlers."""
        try:
            try:
                answer = ("value", self.function(*self.args))
            except self.expected as error:
                answer = ("error", error)
            payload = pickle.dumps(answer)
        except BaseException:  # a bug, or Ctrl-C: the parent decides
            payload = pickle.dumps((RETRY, None))
        try:
            with os.fdopen(write, "wb") as sink:
                sink.write(payload)
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(0)

    def result(self):
        """The function's value (raising what it raised, if expected); computed here when there is no child."""
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
            os.waitpid(self.pid, 0)
            self.pid = None

    def __exit__(self, *exc) -> None:
        self._reap()
