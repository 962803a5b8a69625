"""Which device each worker sees, local or SLURM alike: one visible GPU per worker (`CUDA_VISIBLE_DEVICES`),
K workers per GPU to pack tiny proxies, N GPUs per worker whose cells train on N devices, or CPU workers
sharing the cores.

The GPUs to choose from are the ones this process may use: the entries of `CUDA_VISIBLE_DEVICES` when it is
set (SLURM sets it to the allocation's GPUs; a user may narrow it), else every GPU nvidia-smi lists."""

from __future__ import annotations

import os
import re

from errors import ConfigError

_CUDA = re.compile(r"^cuda:(\d+)$")


def _nvidia_smi_gpus() -> int:
    """GPUs this machine shows, without importing torch (nvidia-smi), 0 when none."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(1 for line in out.splitlines() if line.startswith("GPU "))


def visible_gpus() -> list[str]:
    """The `CUDA_VISIBLE_DEVICES` entries of the GPUs this process may use (indices or UUIDs), in order.
    nvidia-smi ignores that variable, so it is read first: a SLURM task on GPU 3 must not pick GPU 0."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [entry.strip() for entry in visible.split(",") if entry.strip() and entry.strip() != "-1"]
    return [str(i) for i in range(_nvidia_smi_gpus())]


def parse_devices(spec: str) -> list[str]:
    """'auto' (every visible GPU, else the CPU), 'cpu', or 'cuda:0,cuda:1' (the first and second visible GPU)
    → device names: 'cpu' or `CUDA_VISIBLE_DEVICES` entries."""
    if spec == "auto":
        return visible_gpus() or ["cpu"]
    if spec == "cpu":
        return ["cpu"]
    gpus = visible_gpus()
    devices = []
    for part in spec.split(","):
        match = _CUDA.match(part.strip())
        if not match:
            raise ConfigError(f"--devices {spec!r} is invalid: use auto, cpu, or a list like cuda:0,cuda:1.")
        index = int(match.group(1))
        if index >= len(gpus):
            raise ConfigError(f"--devices {spec!r} is invalid: cuda:{index} is not visible here "
                              f"({len(gpus)} GPU{'s' if len(gpus) != 1 else ''} visible).")
        devices.append(gpus[index])
    return devices


def worker_slots(devices: list[str], workers: int | None, per_device: int, devices_per_cell: int = 1) -> list[str]:
    """The device(s) of each worker, as its `CUDA_VISIBLE_DEVICES`: `per_device` workers per GPU, or one worker per
    group of `devices_per_cell` GPUs (a multi-device cell occupies that many slots), by default one worker per
    slot; on the CPU `workers` (default 1)."""
    if per_device < 1:
        raise ConfigError(f"--workers-per-device {per_device} is invalid: must be ≥ 1.")
    if devices == ["cpu"]:
        return ["cpu"] * (workers or 1)
    if devices_per_cell > len(devices):
        raise ConfigError(f"--devices-per-cell {devices_per_cell} needs {devices_per_cell} GPUs; "
                          f"{len(devices)} {'is' if len(devices) == 1 else 'are'} visible here ({','.join(devices)}).")
    groups = [",".join(devices[i:i + devices_per_cell])
              for i in range(0, len(devices) - devices_per_cell + 1, devices_per_cell)]
    slots = [group for group in groups for _ in range(per_device)]
    return [slots[i % len(slots)] for i in range(workers or len(slots))]


def usable_cores() -> int:
    """The cores this process may run on: its affinity where the OS has one (Linux: taskset, cgroups, a SLURM
    allocation), else every core."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def capped_threads(threads: int) -> int:
    """`threads`, at most OMP_NUM_THREADS when this process has it set: a cap its user or scheduler chose (say, two
    test processes sharing two cores) holds for the workers too, whose own OMP_NUM_THREADS is set from `threads`.
    Idle OpenMP threads spin while they wait, so a worker with more threads than free cores burns the cores its
    neighbours need."""
    cap = os.environ.get("OMP_NUM_THREADS", "")
    return min(threads, int(cap)) if cap.isdigit() and int(cap) > 0 else threads


def worker_env(device: str, threads: int) -> dict[str, str]:
    """Environment of a worker on `device` with `threads` CPU threads."""
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = "" if device == "cpu" else device
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    return env
