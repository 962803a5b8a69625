"""Environment variables set for the duration of an export: the trackers' documented offline switches."""

from __future__ import annotations

import os
from contextlib import contextmanager


@contextmanager
def environment(values: dict[str, str]):
    """Within the block, `values` are set in `os.environ`; afterwards each variable is as it was."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
