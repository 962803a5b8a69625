"""Keeps a sweep's report current from where the sweep runs, with no process left on the submitting machine:
a thread that reads the sweep's progress every `every` seconds and asks the report process (live_report) for a
rewrite whenever more cells are finished. On SLURM the array's first task runs one beside its worker."""

from __future__ import annotations

import threading
from pathlib import Path

import db
from experiments.workers.live_report import LiveReport
from experiments.workers.progress import ProgressReader

KEEP_EVERY = 10.0


class ReportKeeper:
    """`start()`, then `stop()` to end the thread; `live` is the report process, whose last page the sweep's
    closer draws (experiments.workers.closing)."""

    def __init__(self, results_dir: Path, sweep: str, report: list[str], *, retries: int, stale_after: float,
                 every: float = KEEP_EVERY) -> None:
        self.reader = ProgressReader(results_dir, sweep, retries, stale_after)
        self.live = LiveReport(report, db.sweep_dir(results_dir, sweep) / "logs" / "report.log")
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="report-keeper", daemon=True)

    def start(self) -> "ReportKeeper":
        self.live.start()
        self._thread.start()
        return self

    def _run(self) -> None:
        done = None
        while not self._stop.wait(0 if done is None else self.every):
            try:
                now = self.reader.read().done
            except Exception:  # a filesystem hiccup: the next look tries again
                continue
            if now != done:
                if done is not None:
                    self.live.cell_finished()
                done = now

    def stop(self) -> None:
        """Stop looking (the report process keeps running until `live` is closed or abandoned)."""
        self._stop.set()
        self._thread.join()
