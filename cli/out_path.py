"""Checking where a command will write before any work: an --out file, or the results store itself.

Permission bits alone cannot tell (root passes every `os.access` check, yet cannot create anything under /proc or
on a read-only mount), so a folder is judged the only sure way: a probe file is created and removed again in the
folder, or, when it does not exist yet, in the nearest folder above it that does (where the command will create
it). Nothing else is written, so a launch refused later leaves no trace.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from errors import ConfigError

PROBE = ".harness-write-probe-"


def check_writable_folder(folder: Path, what: str) -> None:
    """ConfigError '<what> cannot be written: no file can be created in <where> (<why>)' unless a new file can be
    made in `folder`, or, while it does not exist, in the nearest existing folder above it."""
    existing = next(p for p in (folder, *folder.absolute().parents) if p.exists())
    try:
        with tempfile.NamedTemporaryFile(dir=existing, prefix=PROBE):
            pass
    except OSError as err:
        raise ConfigError(f"{what} cannot be written: no file can be created in {str(existing)!r} "
                          f"({err.strerror or err}).") from None


def check_out_path(flag: str, path: str | Path) -> Path:
    """`path` as a Path that a file can be written to (its folder is created by the write); ConfigError when it is
    a folder, something above it is a file, or its folder (or the file itself) cannot be written."""
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
