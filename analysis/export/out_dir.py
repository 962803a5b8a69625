"""The export directory: created if missing, and proved writable before anything is written into it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from analysis.errors import AnalysisError


def writable_dir(path: str | os.PathLike) -> Path:
    """`path` as a directory this process can write in; AnalysisError (one line) when it cannot be."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise AnalysisError(f"cannot write the export to {path}: it is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as err:
        raise AnalysisError(f"cannot write the export to {path}: {err.strerror or err}") from err
    return path
