"""The local backend: N long-lived worker processes on this machine (started on standby while the plan is
written: experiments.backends.local_workers) run the claim loop over a stored plan while this process shows
live progress, has the report rewritten after each finished cell (by a low-priority report process,
experiments.workers.live_report), and turns Ctrl-C / SIGTERM into a clean stop of every worker (each
checkpoints its cell)."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time

from db.errors import DbError
from experiments.backends.local_workers import LocalWorkers
from experiments.workers.closing import Closing, close_sweep, closing_error
from experiments.workers.live_report import LiveReport
from experiments.workers.progress import EXIT_CELLS_LEFT, ProgressReader, exit_code, left_lines, render

REFRESH_EVERY = 0.5
CLOSE_POLL = 0.5  # seconds between looks at a closing another launcher is doing
EXIT_POLL = 0.05  # a worker's exit is noticed this soon (a waitpid each time: nothing to read)
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

    def __init__(self, workers: LocalWorkers, *, progress: bool, report: list[str] | None) -> None:
        self.workers, self.results_dir, self.sweep = workers, workers.results_dir, workers.sweep
        self.retries, self.stale_after = workers.retries, workers.stale_after
        self.reader = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after)
        self.display = LiveDisplay(progress)
        self.logs = workers.logs
        self.report = LiveReport(report, self.logs / "report.log")
        self.stop_signal: int | None = None
        self.processes: list[subprocess.Popen | None] = [None] * len(workers.slots)
        self.respawns = [0] * len(workers.slots)

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
            self.workers.cancel()  # nothing to train: standby workers stop importing
            return self._finish()
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            self.processes = [self.workers.start(i) for i in range(len(self.processes))]
            last_done = done_at_start
            while True:
                progress = self.reader.read()
                elapsed = time.monotonic() - started
                finished_here = progress.done - done_at_start
                eta = elapsed / finished_here * (progress.total - progress.done) if finished_here else None
                self.display.show(render(self.sweep, progress, elapsed, eta))
                if progress.done != last_done:
                    last_done = progress.done
                    if progress.done < progress.total:  # the last cell's page is the closing one, drawn once
                        self.report.cell_finished()  # the workers have exited and their claims are released
                elif any(claim.step for _, claim in progress.running):
                    self.report.start()  # once training has begun: its imports would delay the workers' first step
                self._respawn_dead(progress)
                running = [p for p in self.processes if p is not None and p.poll() is None]
                if not running:
                    break
                _wait_any(running, REFRESH_EVERY)
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
                print(f"worker w{i} exited with {process.returncode}; starting a new one (log "
                      f"{self.logs / f'w{i}.log'})",
                      file=sys.stderr)
                self.processes[i] = self.workers.start(i)

    def _finish(self) -> int:
        """Print the outcome; close the finished sweep (`_close`). The outcome and the exit code come from one
        fresh read of the store, nothing remembered from the run."""
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
        error = self._close()
        if error:
            print(f"sweep {self.sweep}: the report could not be written: {error}", file=sys.stderr)
        for cell in progress.failed_cells:
            print(f"  failed: cell {cell.index} {cell.label} ({cell.run_id}); traceback in the runs view's summary, "
                  f"log under {self.logs}/", file=sys.stderr)
        return exit_code(progress)

    def _close(self) -> str | None:
        """Close the finished sweep once, claimed as every backend does (experiments.workers.closing: the store
        compacted, so later queries read a few merged shards, not thousands; the report's last page): a sweep
        closed before is left as it is, one whose closing was killed is closed now, and while another launcher
        closes it this one waits. Returns why the report's last page could not be written, or None."""
        waited, closer = False, f"local-{socket.gethostname()}-{os.getpid()}"
        try:
            while (outcome := close_sweep(self.results_dir, self.sweep, retries=self.retries, report=None,
                                          stale_after=self.stale_after, closer=closer,
                                          live=self.report)) is Closing.BUSY:
                if not waited:
                    print(f"sweep {self.sweep}: another launcher is closing it (compaction, the report's last page); "
                          "waiting for it", file=sys.stderr, flush=True)
                    self.report.hold()  # our report process reads nothing while the other compacts
                    waited = True
                time.sleep(CLOSE_POLL)
        except (DbError, OSError) as error:  # housekeeping failed (a filesystem without locks): the cells stand
            print(f"sweep {self.sweep}: the store could not be compacted ({error}); the next run of this command "
                  "closes it", file=sys.stderr)
            outcome = None  # not closed here
        if outcome is Closing.CLOSED:
            return self.report.error
        self.report.abandon()  # the closer drew the last page
        return closing_error(self.results_dir, self.sweep) if waited else None


def _wait_any(processes: list[subprocess.Popen], timeout: float) -> None:
    """Return when one of `processes` ends (the last worker's end is the sweep's) or after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and all(p.poll() is None for p in processes):
        time.sleep(EXIT_POLL)


def run_local(workers: LocalWorkers, *, progress: bool = True, report: list[str] | None = None) -> int:
    """Run a stored sweep plan on this machine with `workers` (started on standby, or not yet: their slots
    from experiments.backends.devices.worker_slots and the launch's Layout); see `LocalSweep`. `report`: the
    command of the report process (experiments.workers.live_report), None for no report."""
    return LocalSweep(workers, progress=progress, report=report).run()
