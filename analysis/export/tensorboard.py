"""TensorBoard: event files in `DIR/<sweep>/<arm>/<run_id>/`, one run directory per run, a directory per arm.

TensorBoard lists each run as `<sweep>/<arm>/<run_id>`, so a run-filter regex on the arm shows its seeds
together. Every step's values go into one event (TensorBoard drops events whose step goes backwards); the
config and the summary are the run's hparams (the HPARAMS tab), the summary under `harness.<key>` so that it
cannot collide with a config field (`lr`, `seed`). A re-export replaces the event files in each run's
directory. Scalars are stored as 32-bit floats, as TensorBoard stores every scalar.
"""

from __future__ import annotations

import time
from pathlib import Path
from urllib.parse import quote

from analysis.export.runs import ExportRun, SweepRuns

SUMMARY_PREFIX = "harness."
EVENT_FILES = "events.out.tfevents.*"
# Characters kept as they are in directory names; anything else (a '/' in an arm's name) is %-escaped.
_SAFE = " !$&'()+,;=@[]^_{}~-."


def path_part(name: str) -> str:
    """`name` as one directory name: %-escaped where a character would not be one, '.' and '..' included."""
    part = quote(name, safe=_SAFE)
    return part.replace(".", "%2E") if part in (".", "..") else part


def run_dir(out_dir: Path, sweep: str, run: ExportRun) -> Path:
    """Where a run's event file goes."""
    return out_dir / path_part(sweep) / path_part(run.arm) / path_part(run.run_id)


def hparams(run: ExportRun) -> dict:
    """The run's hparams: its config and its summary (prefixed)."""
    return {**run.config, **{SUMMARY_PREFIX + key: value for key, value in run.summary.items()}}


def write(runs: SweepRuns, out_dir: Path, progress) -> None:
    """Write every run's event file (see the module's docstring)."""
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.plugins.hparams.summary_v2 import hparams_pb
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    for run in progress(runs):
        directory = run_dir(out_dir, runs.name, run)
        for old in directory.glob(EVENT_FILES):
            old.unlink()
        writer = EventFileWriter(str(directory))
        now = time.time()
        writer.add_event(Event(wall_time=now, step=0, summary=hparams_pb(hparams(run), trial_id=run.run_id)))
        for step, values in run.by_step():
            summary = Summary(value=[Summary.Value(tag=tag, simple_value=value) for tag, value in values.items()])
            writer.add_event(Event(wall_time=now, step=step, summary=summary))
        writer.close()
