"""Checking where a command will write before any work: an --out file, or the results store itself.

Permission bits alone cannot tell (root passes every `os.access` check, yet cannot create anything under /proc or
on a read-only mount), so a folder is made writable the only sure way: it is created when missing, and a probe
file is created in it and removed again.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness.config.base import ConfigError

PROBE = ".harness-write-probe-"


def check_writable_folder(folder: Path, what: str) -> None:
    """Create `folder` when missing and check that it takes a new file; ConfigError '<what> cannot be written:
    <the system's reason>' otherwise."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=PROBE):
            pass
    except OSError as err:
        where = err.filename if err.filename and not Path(err.filename).name.startswith(PROBE) else folder
        raise ConfigError(f"{what} cannot be written: {err.strerror or err} ({str(where)!r}).") from None


def check_out_path(flag: str, path: str | Path) -> Path:
    """`path` as a Path that a file can be written to, its folder created when missing; ConfigError when it is a
    folder, something above it is a file, or its folder (or the file itself) cannot be written."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{flag} {str(path)!r} is a folder: give a file name in it.")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"{flag} {str(path)!r} cannot be written: {str(parent)!r} is a file, not a folder.")
            break
    check_writable_folder(path.parent, f"{flag} {str(path)!r}")
    if path.exists() and not os.access(path, os.W_OK):
        raise ConfigError(f"{flag} {str(path)!r} cannot be written: the file is read-only.")
    return path
