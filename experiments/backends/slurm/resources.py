"""What the SLURM backend asks of the cluster for each array element, in submitit's words: GPUs (and their type),
CPUs per worker process, memory, time, partition, account, QOS, how many elements at once, the interpreter the
tasks run, the shell lines that prepare it (`module load`, `conda activate`) and any other sbatch option."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from errors import ConfigError
from experiments.backends.layout import Layout

_TIME = re.compile(r"^(?:(?P<days>\d+)-)?(?P<rest>\d+(?::\d+){0,2})$")
_SBATCH_KEY = re.compile(r"^[a-z][a-z0-9_-]*$")
# sbatch options the backend sets itself: each is an option of `harness sweep` (named), or fixed by the backend.
OWN_OPTIONS = {
    "time": "--time", "partition": "--partition", "mem": "--mem", "account": "--account", "qos": "--qos",
    "cpus_per_task": "--cpus-per-worker", "gpus_per_node": "--gpus-per-element and --gpu-type",
    "gpus": "--gpus-per-element and --gpu-type", "gres": "--gpus-per-element and --gpu-type",
    "gpus_per_task": "--gpus-per-element and --gpu-type",
    "ntasks_per_node": "--workers-per-device and --devices-per-cell",
    "ntasks": "--workers-per-device and --devices-per-cell", "array": "--workers and --array-parallelism",
    "nodes": None, "job_name": None, "signal": None, "output": None, "error": None, "open_mode": None,
}


def parse_time(value: str | int) -> int:
    """A SLURM time limit (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) → whole minutes (≥ 1), the
    unit submitit needs to tell a time-out from a preemption."""
    text = str(value).strip()
    match = _TIME.match(text)
    if match is None:
        raise ConfigError(f"--time {value!r} is invalid: use minutes, HH:MM:SS or D-HH:MM:SS (SLURM's formats).")
    parts = [int(p) for p in match.group("rest").split(":")]
    if match.group("days") is not None:  # D-HH, D-HH:MM, D-HH:MM:SS
        hours, minutes, seconds = (parts + [0, 0])[:3]
    else:  # MM, MM:SS, HH:MM:SS
        hours, minutes, seconds = (0, parts[0], 0) if len(parts) == 1 else (0, *parts) if len(parts) == 2 else parts
    total = int(match.group("days") or 0) * 1440 + hours * 60 + minutes + seconds / 60
    if total < 1:
        raise ConfigError(f"--time {value!r} is invalid: at least one minute.")
    return int(-(-total // 1))


def parse_sbatch(pairs: list[str] | tuple[str, ...]) -> dict[str, str | bool]:
    """`--sbatch KEY=VALUE` options (or a bare `KEY` for a flag such as `exclusive`) → submitit's
    `additional_parameters` (keys in its underscore form); ConfigError for a malformed one, a repeated key, or
    a key the backend sets itself (naming the option that sets it)."""
    options: dict[str, str | bool] = {}
    for pair in pairs:
        key, equals, value = str(pair).partition("=")
        key = key.strip().lstrip("-").replace("-", "_")
        if not _SBATCH_KEY.match(key) or (equals and not value.strip()) or "\n" in value:
            raise ConfigError(f"--sbatch {pair!r} is invalid: use KEY=VALUE with one of sbatch's long options as KEY "
                              "(constraint=a100, exclude=node07, mail-type=END), or KEY alone for a flag (exclusive).")
        if key in OWN_OPTIONS:
            own = OWN_OPTIONS[key]
            raise ConfigError(f"--sbatch {pair!r}: " + (f"use {own}." if own else
                              f"--{key.replace('_', '-')} is set by the backend (one node per array element, its "
                              "logs under <results>/slurm/, the checkpoint-and-requeue signal) and cannot be changed."))
        if key in options:
            raise ConfigError(f"--sbatch {key.replace('_', '-')} is given twice: give it once.")
        options[key] = value if equals else True
    return options


def check_setup(lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """`--setup` lines: each one non-empty shell line (ConfigError otherwise)."""
    for line in lines:
        if not str(line).strip() or "\n" in str(line):
            raise ConfigError(f"--setup {line!r} is invalid: one non-empty shell line per --setup (e.g. "
                              "--setup 'module load cuda/12.4' --setup 'source ~/venv/bin/activate').")
    return tuple(lines)


def _positive(name: str, value: int | None, minimum: int = 1) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < minimum):
        raise ConfigError(f"--{name.replace('_', '-')} {value!r} is invalid: must be an integer ≥ {minimum}.")


@dataclass(frozen=True)
class SlurmResources:
    """One array element's request: `gpus_per_element` GPUs (of `gpu_type`, e.g. a100), `cpus_per_worker` CPUs
    for each process of a worker, `mem` per element; `python` runs the tasks after the `setup` lines; `sbatch`
    holds any other sbatch option (`parse_sbatch`)."""

    partition: str | None = None
    gpus_per_element: int = 0
    gpu_type: str | None = None
    cpus_per_worker: int | None = None
    mem: str | None = None
    time: str | int = "1:00:00"
    account: str | None = None
    qos: str | None = None
    array_parallelism: int | None = None
    python: str | None = None  # None: this interpreter
    setup: tuple[str, ...] = ()
    sbatch: tuple[tuple[str, str | bool], ...] = ()

    def __post_init__(self) -> None:
        for name, minimum in (("gpus_per_element", 0), ("cpus_per_worker", 1), ("array_parallelism", 1)):
            _positive(name, getattr(self, name), minimum)
        if self.mem is not None and not re.match(r"^\d+[KMGT]?$", str(self.mem)):
            raise ConfigError(f"--mem {self.mem!r} is invalid: SLURM's form, e.g. 16G or 16000 (MB).")
        if self.gpu_type is not None and (not self.gpus_per_element or not re.match(r"^[\w.-]+$", self.gpu_type)):
            raise ConfigError(f"--gpu-type {self.gpu_type!r} is invalid: a GPU type the cluster names (a100, h100) "
                              "with --gpus-per-element ≥ 1.")
        if self.python is not None and (not str(self.python).strip() or "\n" in str(self.python)):
            raise ConfigError(f"--python {self.python!r} is invalid: a path to a Python interpreter, or a command "
                              "the --setup lines put on PATH (python3).")
        check_setup(self.setup)
        parse_time(self.time)

    @property
    def time_min(self) -> int:
        return parse_time(self.time)

    def parameters(self, layout: Layout, job_name: str) -> dict:
        """submitit's parameters for one array element of `layout`'s workers (no sbatch text of ours): one SLURM
        task per worker, with `cpus_per_worker` CPUs for each of its processes."""
        gpus = self.gpus_per_element
        cpus = None if self.cpus_per_worker is None else self.cpus_per_worker * layout.devices_per_cell
        parameters = dict(job_name=job_name, time=self.time_min, nodes=1,
                          ntasks_per_node=layout.per_element(gpus), cpus_per_task=cpus,
                          gpus_per_node=(f"{self.gpu_type}:{gpus}" if self.gpu_type else gpus) or None, mem=self.mem,
                          partition=self.partition, account=self.account, qos=self.qos,
                          array_parallelism=self.array_parallelism, setup=list(self.setup) or None,
                          additional_parameters=dict(self.sbatch) or None)
        return {k: v for k, v in parameters.items() if v is not None}

    def python_command(self, default: str) -> str:
        """The shell text that starts the tasks' interpreter: `python` quoted, else `default` (this one)."""
        return shlex.quote(self.python or default)
