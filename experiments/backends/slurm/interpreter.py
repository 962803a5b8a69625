"""Whether the compute nodes can start the interpreter the SLURM backend's tasks run (`--python`, by default
this one), judged from this machine's mount table: the nodes see the results directory (the backend's
contract), so an interpreter on the same filesystem, or on any network filesystem, is reachable; one on this
machine's local disk while the results are on a network filesystem is not (refused); a case the mount table
cannot settle (no mount table, both on local disks: a one-node cluster?) is a warning."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from errors import ConfigError

# Filesystems several machines mount: a path on one of them may be the same file on every node.
NETWORK_FILESYSTEMS = frozenset({
    "nfs", "nfs4", "lustre", "gpfs", "beegfs", "fhgfs", "cifs", "smb3", "ceph", "fuse.ceph", "glusterfs",
    "fuse.glusterfs", "panfs", "wekafs", "pvfs2", "orangefs", "afs", "gfs2", "ocfs2", "fuse.sshfs", "fuse.juicefs",
    "virtiofs", "9p",
})


@dataclass(frozen=True)
class Mount:
    point: str
    fstype: str

    @property
    def network(self) -> bool:
        return self.fstype in NETWORK_FILESYSTEMS


def read_mounts(text: str | None = None) -> list[Mount] | None:
    """The mounts of /proc/self/mountinfo (or of `text` in its format); None where there is none."""
    if text is None:
        try:
            text = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return None
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if "-" in fields[6:]:
            dash = fields.index("-", 6)
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])  # \040 is a space
            mounts.append(Mount(point, fields[dash + 1]))
    return mounts


def mount_of(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount a path lives on: the longest mount point above it (the last such, as the kernel stacks them)."""
    best = None
    for mount in mounts:
        inside = path == mount.point or path.startswith(mount.point.rstrip("/") + "/")
        if inside and (best is None or len(mount.point) >= len(best.point)):
            best = mount
    return best


def check_interpreter(python: str, results_dir: Path, mounts: list[Mount] | None = None,
                      given: bool = False) -> str | None:
    """ConfigError when the nodes cannot see `python` (see the module's docstring); a warning line when that
    cannot be told; None when it is fine. A bare command (`python3`) is looked up on the node: not judged here.
    A venv's own directory is what is judged: its base interpreter must exist on the nodes too."""
    if os.sep not in python:
        return None
    mounts = read_mounts() if mounts is None else mounts
    where = os.path.realpath(os.path.dirname(os.path.abspath(python)))  # the venv's bin/, not the base it links to
    said = f"--python {python}" if given else f"the interpreter the tasks run ({python}; --python PATH to change it)"
    here = mount_of(where, mounts or [])
    there = mount_of(os.path.realpath(Path(results_dir).absolute()), mounts or [])  # it may not exist yet
    if here is None or there is None:
        return f"cannot tell whether the compute nodes can run {said}: no mount table here; it must exist on them."
    if here.point == there.point or here.network:
        return None
    if there.network:
        raise ConfigError(
            f"{said} is on this machine's {here.fstype} at {here.point}, which compute nodes do not mount; they see "
            f"the results directory's {there.fstype} at {there.point}. Install the environment there and pass "
            "--python PATH, or name an interpreter the nodes have (--python python3 with --setup 'module load …').")
    return (f"{said} ({here.fstype} at {here.point}) and the results directory ({there.fstype} at {there.point}) "
            "are on local disks: fine on a one-node cluster; on several, the nodes must see both at these paths.")
