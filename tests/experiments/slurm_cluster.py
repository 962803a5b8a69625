"""A real one-node SLURM for the tests: Debian's slurmctld, slurmd and munge (installed with apt-get when
missing; CI runs as root), a slurm.conf under a temp dir, the daemons started by hand (no systemd) and
stopped by their pid files. Recipe: ../shared/TOOLCHAIN.md."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from system_packages import install

PACKAGES = ("slurmctld", "slurmd", "munge", "slurm-client")
PARTITION = "debug"


def _install() -> None:
    missing = install(PACKAGES, lambda: all(shutil.which(tool) for tool in ("slurmctld", "slurmd", "munged", "sbatch")))
    if missing:
        raise RuntimeError(f"SLURM cannot be had: {missing}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _conf(root: Path, host: str, cpus: int, memory_mb: int) -> str:
    ctld, slurmd = _free_port(), _free_port()  # not the default ports: another SLURM may run on this machine
    return f"""\
ClusterName=harness-test
SlurmctldHost={host}
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={root}/munge/munge.socket,cred_expire=5
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SchedulerParameters=sched_interval=1
MinJobAge=300
KillWait=10
NodeName={host} CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN
PartitionName={PARTITION} Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _terminate(pid: int, timeout: float = 10.0) -> None:
    """SIGTERM a daemon we started and wait for it to go (the next start reuses nothing of it)."""
    if not _alive(pid):
        return
    os.kill(pid, 15)
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)


class SlurmCluster:
    """Start with `start()`, use `env` for every command that talks to it, `stop()` at the end (which also
    removes its directory)."""

    def __init__(self) -> None:
        # not under pytest's tmp_path: its parents are mode 700, and munged refuses a socket others cannot reach
        self.root = Path(tempfile.mkdtemp(prefix="harness-slurm-"))
        self.conf = self.root / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(command, env=self.env, capture_output=True, text=True, check=check, timeout=30)

    def start(self) -> "SlurmCluster":
        _install()
        host = socket.gethostname().split(".")[0]
        for name in ("state", "spool", "munge"):
            (self.root / name).mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o755)  # munged refuses a socket in a directory others cannot traverse
        os.chmod(self.root / "munge", 0o755)
        shutil.chown(self.root / "munge", "munge", "munge")
        cpus = os.cpu_count() or 1
        self.conf.write_text(_conf(self.root, host, cpus, 1000 * cpus + 4000))
        munge = self.root / "munge"
        self._daemon("runuser", "-u", "munge", "--", "munged", f"--socket={munge}/munge.socket",
                     f"--pid-file={munge}/munged.pid", f"--log-file={munge}/munged.log",
                     f"--seed-file={munge}/munged.seed")
        self._daemon("slurmctld", "-f", str(self.conf))
        self._daemon("slurmd", "-f", str(self.conf))
        deadline = time.monotonic() + 30
        while "idle" not in self.run("sinfo", "-h", "-o", "%T", check=False).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError(f"SLURM did not come up: {self.log_tail()}")
            time.sleep(0.2)
        return self

    def _daemon(self, *command: str) -> None:
        done = subprocess.run(command, env=self.env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed: {done.stdout}{done.stderr}")

    def log_tail(self) -> str:
        return "\n".join((self.root / name).read_text()[-2000:] for name in ("slurmctld.log", "slurmd.log")
                         if (self.root / name).exists())

    def queue(self) -> list[str]:
        """Job ids of every job still pending or running (array tasks as ID_TASK)."""
        return self.run("squeue", "-h", "-o", "%i", check=False).stdout.split()

    def stop(self) -> None:
        """Cancel every job, wait for them to leave the node, then stop the daemons we started."""
        if _alive(_pid(self.root / "slurmctld.pid")):  # after a failed start the controller may not be up
            self.run("scancel", "--user", "root", check=False)
            deadline = time.monotonic() + 30
            while self.queue() and time.monotonic() < deadline:
                time.sleep(0.2)
        for pidfile in (self.root / "slurmd.pid", self.root / "slurmctld.pid", self.root / "munge" / "munged.pid"):
            pid = _pid(pidfile)
            if pid is not None:
                _terminate(pid)
        shutil.rmtree(self.root, ignore_errors=True)
