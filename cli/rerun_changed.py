"""A launch under other code than made the stored results (docs/sweeps.md, "When the code changed").

Run keys are the configs alone, so a relaunch after a code change reuses the stored results as before; it says so
in one line, naming the code that made them. `--rerun-changed` retrains those cells under this code instead:
each old run moves, with its checkpoints, to `<results>/archive/<run_id>/<n>/` (db/archive.py; nothing is
deleted), so the cell has no run and trains again under the same key. Every launch first completes archiving
that a crash interrupted."""

from __future__ import annotations

import sys
from pathlib import Path

HELP = ("retrain the cells whose stored result other code made (another harness version, git commit or dirty "
        "state), archiving their old runs under <results>/archive/ (default: reuse them, with a note)")


def add_option(parser) -> None:
    """--rerun-changed, shared by `harness sweep` and `harness run`."""
    parser.add_argument("--rerun-changed", action="store_true", help=HELP)


def changed_results(results_dir: Path, run_ids) -> dict:
    """The runs among `run_ids` whose result other code made (db.provenance.other_code_results), after completing
    any archiving a crash interrupted."""
    from db.archive import finish_archiving
    from db.provenance import other_code_results
    from harness.provenance import current_code

    finish_archiving(results_dir)
    return other_code_results(results_dir, run_ids, current_code())


def made_by(changed: dict) -> str:
    """'12 by harness 0.1.0 @ 6eaecc0 (clean)', and what this launch runs."""
    from db.provenance import codes_count
    from harness.provenance import current_code

    return f"{codes_count(changed)}; this launch runs {current_code().describe()}"


def archive(results_dir: Path, changed: dict) -> list[Path]:
    """Move each changed run and its checkpoints into the archive; the entries made (a run another launcher
    archived first is skipped)."""
    from dataclasses import asdict

    from db.archive import archive_run
    from harness.provenance import current_code
    from harness.train.checkpoints import checkpoint_dir

    entries = []
    for run_id, codes in changed.items():
        why = {"made_by": [asdict(code) for code in codes], "retrained_by": asdict(current_code())}
        entry = archive_run(results_dir, run_id, {"checkpoints": checkpoint_dir(results_dir, run_id)}, why)
        if entry is not None:
            entries.append(entry)
    return entries


def settle_sweep_code(results_dir: Path, sweep: str, run_ids: list[str], rerun: bool) -> None:
    """After every check of a `harness sweep` launch: one line when cells' results were made by other code;
    with `rerun`, archive them (and the sweep's record of its closing, so it closes again) and say where."""
    changed = changed_results(results_dir, run_ids)
    prefix = f"harness sweep: {sweep}:"
    if not changed:
        if rerun:
            print(f"{prefix} --rerun-changed: every finished cell's result was made by this code; nothing to "
                  "retrain.", file=sys.stderr)
        return
    cells = f"{len(changed)} of {len(run_ids)} cells" if len(changed) < len(run_ids) else f"all {len(run_ids)} cells"
    if not rerun:
        print(f"{prefix} {cells} have results made by other code ({made_by(changed)}); they are reused: "
              "--rerun-changed retrains them under this code (the old runs are archived, not deleted).",
              file=sys.stderr)
        return
    entries = archive(results_dir, changed)
    _reopen_closing(results_dir, sweep)
    print(f"{prefix} retraining {cells} whose results other code made ({made_by(changed)}); their old runs "
          f"({len(entries)}) moved to {results_dir / 'archive'}/<run_id>/.", file=sys.stderr)


def _reopen_closing(results_dir: Path, sweep: str) -> None:
    """Set aside the sweep's record of its closing (experiments/workers/closing.py: which cells it covered), so the
    retrained cells are compacted and the report's last page drawn again; the record is renamed, not deleted."""
    import os
    import time

    import db

    marker = db.sweep_dir(results_dir, sweep) / "logs" / "closed.json"
    if marker.exists():
        os.replace(marker, marker.with_name(f"closed-{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.json"))


def warn_resume(results_dir: Path, run_id: str) -> None:
    """A resume under other code than made the run's segments so far: say so (one warning line)."""
    from db.provenance import run_codes
    from harness.provenance import current_code

    codes = [code for code in run_codes(results_dir, run_id) if code != current_code()]
    if codes:
        print(f"harness run: warning: run {run_id!r} was trained so far by {', '.join(c.describe() for c in codes)}; "
              f"this resume runs {current_code().describe()}, so the run will mix code versions.", file=sys.stderr)
