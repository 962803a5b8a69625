"""Starting a local sweep's worker processes, early.

A worker spends seconds importing torch and Lightning before it can train, so `harness sweep` starts one
per slot on standby (`StandbyWorkers`) before it even plans the sweep: they import while it expands,
validates and stores the plan. A standby worker prints into a temp file and waits for one line on its
stdin, its command line (JSON) once the plan is stored: it then moves its output, what it printed so far
included, to its log and runs as any worker. Until then it has touched nothing in the results directory
and holds no claim, so a launch that ends first (bad input, nothing left to train) kills it. A worker
started later (a respawn), or for a slot with no live standby, starts from scratch.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

import db
from experiments.backends.devices import capped_threads, usable_cores, worker_env
from harness.train.placement import SINGLE_DEVICE, Placement

WORKER = (sys.executable, "-m", "experiments.workers.worker")


def threads(slots: list[str], i: int, placement: Placement = SINGLE_DEVICE) -> int:
    """torch threads of the worker in slot i: the cores this process may run on (`usable_cores`) shared among the CPU
    workers and their helper processes (a multi-device cell's other ranks), capped by `capped_threads`; 1 on a
    GPU."""
    if slots[i] != "cpu":
        return 1
    return capped_threads(max(1, usable_cores() // max(1, slots.count("cpu") * placement.devices)))


class StandbyWorkers:
    """One worker process per slot, importing, that waits for its command line (`LocalWorkers.start`)."""

    def __init__(self, slots: list[str], placement: Placement = SINGLE_DEVICE,
                 command: tuple[str, ...] = (*WORKER, "--standby")) -> None:
        self.slots, self.placement, self.command = slots, placement, list(command)
        self._waiting: dict[int, tuple[subprocess.Popen, IO[bytes]]] = {}  # slot → (process, its temp output file)

    def start(self) -> StandbyWorkers:
        for i, slot in enumerate(self.slots):
            output = tempfile.TemporaryFile()
            process = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=output, stderr=subprocess.STDOUT,
                                       env=worker_env(slot, threads(self.slots, i, self.placement)))
            self._waiting[i] = (process, output)
        return self

    def hand_over(self, i: int, argv: list[str], log: Path) -> subprocess.Popen | None:
        """Slot i's standby worker, given its command line; None when it has none or it died (what it
        printed is appended to `log`)."""
        waiting = self._waiting.pop(i, None)
        if waiting is None:
            return None
        process, output = waiting
        with output:
            if process.poll() is None:
                assert process.stdin is not None  # started with stdin=PIPE
                try:
                    process.stdin.write((json.dumps({"argv": argv, "log": str(log)}) + "\n").encode())
                    process.stdin.close()
                    return process
                except OSError:  # it died just now
                    pass
            process.wait()
            output.seek(0)
            with open(log, "ab") as sink:
                sink.write(output.read())
        return None

    def cancel(self) -> None:
        """Kill the standby workers never handed a command line (they hold nothing)."""
        for process, output in self._waiting.values():
            process.kill()
            process.wait()
            output.close()
        self._waiting.clear()


class LocalWorkers:
    """The worker processes of one local sweep, one per slot (a device name, or 'cpu')."""

    def __init__(self, results_dir: Path, sweep: str, slots: list[str], *, retries: int, stale_after: float,
                 heartbeat_every: float, optuna_storage: str | None = None, placement: Placement = SINGLE_DEVICE,
                 keep_checkpoints: str = "last", standby: StandbyWorkers | None = None) -> None:
        self.results_dir, self.sweep, self.slots, self.placement = Path(results_dir), sweep, slots, placement
        self.retries, self.stale_after, self.heartbeat_every = retries, stale_after, heartbeat_every
        self.optuna_storage, self.keep_checkpoints, self.standby = optuna_storage, keep_checkpoints, standby
        self.logs = db.sweep_dir(self.results_dir, sweep) / "logs"

    def arguments(self, i: int) -> list[str]:
        """The command-line arguments of worker i."""
        return ["--results", str(self.results_dir), "--sweep", self.sweep, "--worker", f"w{i}",
                "--retries", str(self.retries), "--stale-after", str(self.stale_after),
                "--heartbeat-every", str(self.heartbeat_every), *self.placement.worker_args(),
                "--keep-checkpoints", self.keep_checkpoints,
                "--threads", str(threads(self.slots, i, self.placement)),
                *(["--optuna-storage", self.optuna_storage] if self.optuna_storage else [])]

    def log(self, i: int) -> Path:
        return self.logs / f"w{i}.log"

    def start(self, i: int) -> subprocess.Popen:
        """Worker i, running: its standby process handed its command line, or a new process."""
        self.logs.mkdir(parents=True, exist_ok=True)
        if self.standby is not None:
            process = self.standby.hand_over(i, self.arguments(i), self.log(i))
            if process is not None:
                return process
        with open(self.log(i), "a") as log:  # the child keeps its own copy of the descriptor
            return subprocess.Popen([*WORKER, *self.arguments(i)], stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL,
                                    env=worker_env(self.slots[i], threads(self.slots, i, self.placement)))

    def cancel(self) -> None:
        """End the standby workers not started (nothing to train, or the launch failed)."""
        if self.standby is not None:
            self.standby.cancel()
