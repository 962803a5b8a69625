"""Writing a command's result to stdout when the reader may stop early (`harness calc --json | head`)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def stdout_reader_may_leave() -> Iterator[None]:
    """Flush stdout at the end of the block; a reader that closed the pipe already has what it wanted, so
    that is not an error (no BrokenPipeError traceback, exit code unchanged)."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # keeps the exit-time flush quiet


def print_result(text: str) -> None:
    """Print `text` (and a newline) to stdout, tolerating a reader that has gone."""
    with stdout_reader_may_leave():
        print(text)
