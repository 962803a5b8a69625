"""`export_sweep`: one sweep's runs into a tracker's offline form, every input checked before anything is written."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from analysis.errors import AnalysisError, suggestion
from analysis.export.environment import environment
from analysis.export.out_dir import writable_dir
from analysis.export.runs import read_sweep
from analysis.export.trackers import TRACKERS, Tracker


@dataclass(frozen=True)
class Exported:
    """What an export wrote."""

    sweep: str
    tracker: Tracker
    out_dir: Path
    runs: int
    arms: int

    def describe(self) -> str:
        """One line: what was written where, and how to look at it."""
        return (f"exported {self.runs} runs ({self.arms} arms) of sweep {self.sweep!r} to {self.out_dir} as "
                f"{self.tracker.title} {self.tracker.form}; view: {self.tracker.view.format(dir=self.out_dir)}")


def _no_progress(runs):
    return runs


def export_sweep(results_dir: str | os.PathLike | None, sweep: str, to: str, out_dir: str | os.PathLike,
                 progress=None) -> Exported:
    """Write every run of `sweep` (config, summary, step and per-layer series, grouped by arm) with tracker `to`
    into `out_dir` (docs/export.md); a re-export replaces the runs it wrote before. Checks, in order and before
    writing: the tracker and its library, the store and the sweep (with the closest name), the directory.
    `progress(iterable, total=, desc=, unit=)` wraps the loop over runs (e.g. a tqdm bar)."""
    if to not in TRACKERS:
        raise AnalysisError(f"no tracker named {to!r}{suggestion(to, TRACKERS, 'trackers')}")
    tracker = TRACKERS[to]
    writer = tracker.writer()
    with environment(getattr(writer, "ENVIRONMENT", {})):
        tracker.require()
        runs = read_sweep(results_dir, sweep)
        if not len(runs):
            raise AnalysisError(f"sweep {sweep!r} has no runs yet ({runs.source.info.progress()}): nothing to export")
        out_dir = writable_dir(out_dir)
        bar = _no_progress if progress is None else (
            lambda items: progress(items, total=len(runs), desc=f"export to {tracker.title}", unit="run"))
        writer.write(runs, out_dir, bar)
    return Exported(runs.name, tracker, out_dir, len(runs), len(runs.arms))
