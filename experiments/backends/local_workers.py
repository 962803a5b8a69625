"""Starting a local sweep's worker processes, early.

A worker spends seconds importing torch and Lightning before it can train, so `harness sweep` starts its
workers on standby as soon as the sweep is validated, and they import while it writes the plan. A standby
worker prints into a temp file and waits for one line on its stdin: `go` once the plan is stored (it then
moves its output, what it printed so far included, to its log and reads the plan) or the end of its input.
Until then it has touched nothing in the results directory and holds no claim, so a launch that is called
off (an error, nothing left to train) kills it. A worker started later (a respawn) starts as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import db
from experiments.backends.devices import worker_env


class LocalWorkers:
    """The worker processes of one local sweep, one per slot (a device name, or 'cpu')."""

    def __init__(self, results_dir: Path, sweep: str, slots: list[str], *, retries: int, stale_after: float,
                 heartbeat_every: float, optuna_storage: str | None = None) -> None:
        self.results_dir, self.sweep, self.slots = Path(results_dir), sweep, slots
        self.retries, self.stale_after, self.heartbeat_every = retries, stale_after, heartbeat_every
        self.optuna_storage = optuna_storage
        self.logs = db.sweep_dir(self.results_dir, sweep) / "logs"
        self._standby: dict[int, tuple[subprocess.Popen, object]] = {}  # slot → (process, its temp output file)

    def threads(self, i: int) -> int:
        """torch threads of worker i: the cores shared among the CPU workers; 1 on a GPU."""
        if self.slots[i] != "cpu":
            return 1
        return max(1, (os.cpu_count() or 1) // max(1, self.slots.count("cpu")))

    def command(self, i: int) -> list[str]:
        """The command line of worker i."""
        return [sys.executable, "-m", "experiments.workers.worker", "--results", str(self.results_dir),
                "--sweep", self.sweep, "--worker", f"w{i}", "--retries", str(self.retries),
                "--stale-after", str(self.stale_after), "--heartbeat-every", str(self.heartbeat_every),
                "--threads", str(self.threads(i)),
                *(["--optuna-storage", self.optuna_storage] if self.optuna_storage else [])]

    def log(self, i: int) -> Path:
        return self.logs / f"w{i}.log"

    def standby(self) -> None:
        """Start every slot's worker on standby: it imports, then waits for `start`."""
        for i in range(len(self.slots)):
            output = tempfile.TemporaryFile()
            process = subprocess.Popen([*self.command(i), "--standby", str(self.log(i))], stdin=subprocess.PIPE,
                                       stdout=output, stderr=subprocess.STDOUT, env=worker_env(self.slots[i], self.threads(i)))
            self._standby[i] = (process, output)

    def start(self, i: int) -> subprocess.Popen:
        """Worker i, running: its standby process told to go, or a new process when it has none (or it died)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        process, output = self._standby.pop(i, (None, None))
        if process is not None:
            with output:
                if process.poll() is None:
                    try:
                        process.stdin.write(b"go\n")
                        process.stdin.close()
                        return process
                    except OSError:  # it died just now
                        pass
                process.wait()  # it died on standby: its log keeps what it printed, and another starts
                output.seek(0)
                with open(self.log(i), "ab") as log:
                    log.write(output.read())
        with open(self.log(i), "a") as log:  # the child keeps its own copy of the descriptor
            return subprocess.Popen(self.command(i), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=worker_env(self.slots[i], self.threads(i)))

    def cancel(self) -> None:
        """Kill the standby workers never told to go (they hold nothing)."""
        for process, output in self._standby.values():
            process.kill()
            process.wait()
            output.close()
        self._standby.clear()
