"""The local backend: N long-lived worker processes on this machine run the claim loop over a stored
plan while this process shows live progress, has the report rewritten after each finished cell (by a
low-priority report process, experiments.workers.live_report), and turns Ctrl-C / SIGTERM into a clean stop of every
worker (each checkpoints its cell)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import db
from db.compact import compact
from experiments.backends.devices import worker_env, worker_slots
from experiments.backends.layout import Layout
from experiments.workers.live_report import LiveReport
from experiments.workers.claims import HEARTBEAT_EVERY
from experiments.workers.progress import EXIT_CELLS_LEFT, ProgressReader, exit_code, left_lines, render
from harness.train.placement import SINGLE_DEVICE, Placement

REFRESH_EVERY = 0.5
MAX_RESPAWNS = 3  # per worker slot: a worker that keeps dying is a bug to read in its log, not to retry forever


class LiveDisplay:
    """Redraws the progress lines in place on a terminal; elsewhere prints the summary line when it changes."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.tty = sys.stderr.isatty()
        self._drawn = 0
        self._last = ""

    def show(self, lines: list[str]) -> None:
        if not self.enabled:
            return
        if self.tty:
            sys.stderr.write("\x1b[F\x1b[2K" * self._drawn + "".join(f"{line}\n" for line in lines))
            sys.stderr.flush()
            self._drawn = len(lines)
        elif lines[0].split(" · elapsed")[0] != self._last:
            self._last = lines[0].split(" · elapsed")[0]
            print(lines[0], file=sys.stderr, flush=True)


class LocalSweep:
    """Start the workers, watch them and the store, stop them cleanly on a signal."""

    def __init__(self, results_dir: Path, sweep: str, *, slots: list[str], retries: int, stale_after: float,
                 progress: bool, report: list[str] | None, optuna_storage: str | None = None,
                 heartbeat_every: float = HEARTBEAT_EVERY, placement: Placement = SINGLE_DEVICE) -> None:
        self.results_dir, self.sweep, self.placement = Path(results_dir), sweep, placement
        self.slots, self.retries, self.stale_after, self.optuna_storage = slots, retries, stale_after, optuna_storage
        self.heartbeat_every = heartbeat_every
        self.reader = ProgressReader(self.results_dir, sweep, retries, stale_after)
        self.display = LiveDisplay(progress)
        self.logs = db.sweep_dir(self.results_dir, sweep) / "logs"
        self.report = LiveReport(report, self.logs / "report.log")
        self.stop_signal: int | None = None
        self.processes: list[subprocess.Popen | None] = [None] * len(slots)
        self.respawns = [0] * len(slots)

    def _spawn(self, i: int) -> subprocess.Popen:
        self.logs.mkdir(parents=True, exist_ok=True)
        cpu_processes = sum(1 for s in self.slots if s == "cpu") * self.placement.devices  # a worker's helpers too
        threads = max(1, (os.cpu_count() or 1) // max(1, cpu_processes)) if self.slots[i] == "cpu" else 1
        command = [sys.executable, "-m", "experiments.workers.worker", "--results", str(self.results_dir), "--sweep", self.sweep,
                   "--worker", f"w{i}", "--retries", str(self.retries), "--stale-after", str(self.stale_after),
                   "--heartbeat-every", str(self.heartbeat_every), *self.placement.worker_args(),
                   "--threads", str(threads), *(["--optuna-storage", self.optuna_storage] if self.optuna_storage else [])]
        with open(self.logs / f"w{i}.log", "a") as log:  # the child keeps its own copy of the descriptor
            return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    env=worker_env(self.slots[i], threads))

    def _on_signal(self, signum, frame) -> None:
        first = self.stop_signal is None
        self.stop_signal = self.stop_signal or signum
        if first:
            for process in self.processes:
                if process is not None and process.poll() is None:
                    process.send_signal(signal.SIGTERM)  # graceful in the worker; a second SIGINT would not be

    def run(self) -> int:
        """Run until every cell is finished or a signal stops us; returns the command's exit code."""
        started = time.monotonic()
        done_at_start = self.reader.read().done
        if done_at_start == self.reader.total:
            return self._finish(trained=False)  # nothing to train: no worker (and no torch import) at all
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.processes = [self._spawn(i) for i in range(len(self.slots))]
            self.report.start()  # its imports overlap the workers'
            last_done = done_at_start
            while True:
                progress = self.reader.read()
                elapsed = time.monotonic() - started
                finished_here = progress.done - done_at_start
                eta = elapsed / finished_here * (progress.total - progress.done) if finished_here else None
                self.display.show(render(self.sweep, progress, elapsed, eta))
                if progress.done != last_done:
                    last_done = progress.done
                    self.report.cell_finished()
                self._respawn_dead(progress)
                if not any(p is not None and p.poll() is None for p in self.processes):
                    break
                time.sleep(REFRESH_EVERY)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        return self._finish()

    def _respawn_dead(self, progress) -> None:
        """A worker that died (killed, out of memory) while cells need work is replaced; its cell is resumed
        by whoever claims it next (its claim is free at once: its process is gone)."""
        if self.stop_signal is not None or progress.done == progress.total:
            return
        for i, process in enumerate(self.processes):
            if process is not None and process.poll() not in (None, 0) and self.respawns[i] < MAX_RESPAWNS:
                self.respawns[i] += 1
                print(f"worker w{i} exited with {process.returncode}; starting a new one (log {self.logs / f'w{i}.log'})",
                      file=sys.stderr)
                self.processes[i] = self._spawn(i)

    def _finish(self, trained: bool = True) -> int:
        """Print the outcome; compact the store and write the final report unless nothing changed. The outcome
        and the exit code come from one fresh read of the store, nothing remembered from the run."""
        progress = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after).read()
        self.display.show(render(self.sweep, progress))
        if self.stop_signal is not None:
            print(f"sweep {self.sweep}: stopped by {signal.Signals(self.stop_signal).name}; {progress.done} of "
                  f"{progress.total} cells finished, the cells in flight checkpointed.\n  resume with the same "
                  f"command: {shlex.join(['harness', *sys.argv[1:]])}",
                  file=sys.stderr)
            self.report.close()
            return 128 + self.stop_signal
        if progress.done < progress.total:
            print(f"sweep {self.sweep}: {progress.total - progress.done} cells left after the workers ended (exit "
                  f"{EXIT_CELLS_LEFT}); see {self.logs}/ and run the same command again.", file=sys.stderr)
            print("\n".join(left_lines(progress)), file=sys.stderr)
            self.report.close()
            return exit_code(progress)
        if trained or not (db.sweep_dir(self.results_dir, self.sweep) / "report.html").exists():
            self.report.settle()  # no rewrite reads the store while it is compacted
            compact(self.results_dir)  # later queries of a finished sweep read a few merged shards, not thousands
            self.report.close()
        if self.report.error:
            print(f"sweep {self.sweep}: the report could not be written: {self.report.error}", file=sys.stderr)
        for cell in progress.failed_cells:
            print(f"  failed: cell {cell.index} {cell.label} ({cell.run_id}); traceback in the runs view's summary, "
                  f"log under {self.logs}/", file=sys.stderr)
        return exit_code(progress)


def run_local(results_dir: Path, sweep: str, *, devices: list[str], layout: Layout, retries: int, stale_after: float,
              progress: bool = True, report: list[str] | None = None, optuna_storage: str | None = None,
              heartbeat_every: float = HEARTBEAT_EVERY) -> int:
    """Run a stored sweep plan on this machine with `layout`'s workers; see `LocalSweep`. `report`: the command of
    the report process (experiments.workers.live_report), None for no report."""
    slots = worker_slots(devices, layout.workers, layout.workers_per_device, layout.devices_per_cell)
    return LocalSweep(results_dir, sweep, slots=slots, retries=retries, stale_after=stale_after, progress=progress,
                      report=report, optuna_storage=optuna_storage, heartbeat_every=heartbeat_every,
                      placement=layout.placement).run()
