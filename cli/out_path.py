"""Checking an --out path before any work: every folder above it that exists must be a folder."""

from __future__ import annotations

from pathlib import Path

from harness.config.base import ConfigError


def check_out_path(flag: str, path: str | Path) -> Path:
    """`path` as a Path; ConfigError when something above it is a file (it could never be created) or it is a folder."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{flag} {str(path)!r} is a folder: give a file name in it.")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"{flag} {str(path)!r} cannot be written: {str(parent)!r} is a file, not a folder.")
            break
    return path
