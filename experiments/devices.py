"""Which device each local worker sees: one visible GPU per worker (`CUDA_VISIBLE_DEVICES`), K workers per
GPU to pack tiny proxies, or CPU workers sharing the cores."""

from __future__ import annotations

import os
import re

from harness.config.base import ConfigError

_CUDA = re.compile(r"^cuda:(\d+)$")


def _visible_gpus() -> int:
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


def parse_devices(spec: str) -> list[str]:
    """'auto' (every GPU, else the CPU), 'cpu', or 'cuda:0,cuda:1' → device names ('cpu' or GPU indices)."""
    if spec == "auto":
        n = _visible_gpus()
        return [str(i) for i in range(n)] or ["cpu"]
    if spec == "cpu":
        return ["cpu"]
    devices = []
    for part in spec.split(","):
        match = _CUDA.match(part.strip())
        if not match:
            raise ConfigError(f"--devices {spec!r} is invalid: use auto, cpu, or a list like cuda:0,cuda:1.")
        devices.append(match.group(1))
    return devices


def worker_slots(devices: list[str], workers: int | None, per_device: int) -> list[str]:
    """The device of each worker: per_device workers per GPU by default; CPU: `workers` (default 1)."""
    if per_device < 1:
        raise ConfigError(f"--per-device {per_device} is invalid: must be ≥ 1.")
    if devices == ["cpu"]:
        return ["cpu"] * (workers or 1)
    slots = [device for device in devices for _ in range(per_device)]
    return [slots[i % len(slots)] for i in range(workers or len(slots))]


def worker_env(device: str, threads: int) -> dict[str, str]:
    """Environment of a worker on `device` with `threads` CPU threads."""
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = "" if device == "cpu" else device
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    return env
