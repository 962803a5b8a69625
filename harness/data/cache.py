"""The on-disk cache shared by every arm and worker of a sweep: where it lives and how files enter it.

Files appear under their final name only when complete (written to a temp file in the same directory,
then `os.replace`, which is atomic on POSIX), so a reader that sees a name may use it without a lock.
Builders hold an exclusive `flock` on a per-key lock file so that one worker builds while the others wait
and then reuse its result instead of repeating the work.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterator

from harness.data.errors import DataError

CACHE_ENV = "HARNESS_CACHE"


def resolve_cache_dir(cache_dir: str | None) -> Path:
    """`cache_dir`, else $HARNESS_CACHE, else ~/.cache/harness (created if missing)."""
    chosen = cache_dir or os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "harness"
    path = Path(chosen).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # a file in the way, no permission, read-only filesystem
        origin = ("DataConfig.cache_dir" if cache_dir else f"${CACHE_ENV}" if os.environ.get(CACHE_ENV)
                  else "the default cache")
        raise DataError(
            f"{origin}={str(path)!r} is not a usable cache directory ({error.strerror}); set DataConfig.cache_dir "
            f"or ${CACHE_ENV} to a writable directory."
        ) from None
    return path


@contextlib.contextmanager
def exclusive_lock(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive advisory lock on `lock_path` (blocking) for the duration of the block."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _current_umask() -> int:
    mask = os.umask(0)  # reading the umask means setting it; put it straight back
    os.umask(mask)
    return mask


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Call `write(temp_path)` and move the result to `path` in one atomic step; no partial file is ever visible."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(handle)
    temp_path = Path(temp_name)
    try:
        write(temp_path)
        # mkstemp creates the file private (0600); a cache shared by a team needs the usual umask-based mode.
        os.chmod(temp_path, 0o666 & ~_current_umask())
        os.replace(temp_path, path)
    finally:
        temp_path.unlink(missing_ok=True)


def build_once(path: Path, build: Callable[[Path], object]) -> bool:
    """Make sure `path` exists, building it with `build(temp_path)` under the key's lock if it does not.

    Returns True when this call built the file, False when it was already there (or another process
    built it while this one waited for the lock).
    """
    if path.exists():
        return False
    with exclusive_lock(path.parent / f".{path.name}.lock"):
        if path.exists():
            return False
        write_atomically(path, build)
        return True


def file_hash(path: Path) -> str:
    """SHA-256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()
