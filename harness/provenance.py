"""Which code and machine make a run: collected when a run starts and recorded with each segment it opens
(db/provenance.py has the columns; docs/db.md, "Provenance").

The code is the harness version and, where the `harness` package was imported from a git checkout, its commit and
whether the checkout has uncommitted changes to tracked files (untracked files do not count, as for `git describe
--dirty`). It is the checkout of the package, not of the working directory, and it is looked up once per process
(two `git` calls, a few milliseconds; never per step). Torch-free at import: the launchers compare the current code
with the stored runs' before anything trains; only `run_provenance` imports torch, which a run has loaded already.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from pathlib import Path

import harness
from db.provenance import Code

GIT_SECONDS = 10.0  # a hung filesystem must not hang a run: past this the commit is simply not recorded


def package_root() -> Path:
    """The folder the `harness` package was imported from (a checkout's top level, or site-packages)."""
    return Path(harness.__file__).resolve().parent.parent


def _git(root: Path, *args: str) -> subprocess.CompletedProcess | None:
    """`git -C root args` (no optional index lock, so concurrent workers never contend), or None when git is
    missing or hangs."""
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=GIT_SECONDS,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0"}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _inside_a_repository(root: Path) -> bool:
    """Whether some folder from `root` up holds a `.git` (checked without running git)."""
    return any((folder / ".git").exists() for folder in (root, *root.parents))


def checkout_state(root: Path) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout whose tracked files include `root/harness/__init__.py`; (None, None)
    for an installed package (also one in a virtualenv inside some repository), without git, or before a first
    commit."""
    if not _inside_a_repository(root):
        return None, None
    tracked = _git(root, "ls-files", "--error-unmatch", "--", "harness/__init__.py")
    if tracked is None or tracked.returncode != 0:
        return None, None
    status = _git(root, "status", "--porcelain=v2", "--branch", "--untracked-files=no")
    if status is None or status.returncode != 0:
        return None, None
    lines = status.stdout.splitlines()
    commit = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    if commit is None or commit == "(initial)":
        return None, None
    return commit, any(not line.startswith("#") for line in lines)


@functools.cache
def current_code() -> Code:
    """The code this process runs (looked up once)."""
    commit, dirty = checkout_state(package_root())
    return Code(harness.__version__, commit, dirty)


def device_name(device: str, devices: int = 1) -> str:
    """'cpu', or the CUDA device's name ('NVIDIA H200'); '× N' appended for a run on N devices."""
    import torch

    name = torch.cuda.get_device_name(torch.cuda.current_device()) if device == "cuda" else device
    return f"{name} × {devices}" if devices > 1 else name


def run_provenance(device: str, precision: str, devices: int = 1) -> dict[str, object]:
    """The provenance columns of a segment a run opens on `device` ('cpu' or 'cuda') at Lightning `precision`."""
    import lightning
    import torch

    code = current_code()
    return {
        "harness_version": code.harness_version, "git_commit": code.git_commit, "git_dirty": code.git_dirty,
        "torch_version": torch.__version__, "lightning_version": lightning.__version__,
        "python_version": platform.python_version(), "device_name": device_name(device, devices),
        "trainer_precision": precision,
    }
