"""Debian packages a test fixture needs (SLURM's daemons, Chromium), installed with apt-get when missing.

The two pytest-xdist workers can both find a package missing at once (the browser tests live in two files), and
apt-get fails at once when another apt-get holds dpkg's lock: CI saw "apt-get could not install chromium-driver"
that way. Installs here are serialized by a file lock, the second looks again once it holds it, and apt-get
waits for a lock held by any other process instead of failing."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "harness-tests-apt.lock"
WAIT_FOR_LOCKS = ("-o", "DPkg::Lock::Timeout=600")


def install(packages: tuple[str, ...], present: Callable[[], bool]) -> str | None:
    """Install `packages` unless `present()` holds; why they cannot be had (apt-get's own words), or None."""
    if present():
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return f"{' '.join(packages)} missing and cannot be installed here (needs root and apt-get)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if present():  # the other worker installed them meanwhile
            return None
        subprocess.run(["apt-get", *WAIT_FOR_LOCKS, "update", "-qq"], env=env, capture_output=True, timeout=900)
        done = subprocess.run(["apt-get", *WAIT_FOR_LOCKS, "install", "-y", "-qq", *packages], env=env,
                              capture_output=True, text=True, timeout=1200)
    if present():
        return None
    return f"apt-get install {' '.join(packages)} failed (exit {done.returncode}): {done.stderr.strip()[-800:]}"
