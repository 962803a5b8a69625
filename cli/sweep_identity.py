"""`harness sweep`'s plan identity (docs/sweeps.md): a launch under a sweep name that already has a plan may run
that plan again or add seeds to it; anything else is refused before anything is written, unless `--replace`
(the old plan moves to the sweep's history) or another `--name`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable


def settle_plan(plan, source: str, results_dir: Path, *, replace: bool, merge: bool = False) -> Callable[[], None]:
    """Check the launch against the sweep's stored plan and return the write to make once every other check
    passed (a no-op when the plans agree, so a relaunch leaves the store as it was). `merge`: a round of
    --until-decided, whose seed counts may differ from the stored ones either way (the union is kept)."""
    import db
    from experiments.plan.identity import merged_rows, plan_change
    from harness.config.base import ConfigError

    meta, rows = plan.meta(source), [cell.plan_row() for cell in plan.plan_cells]
    stored_meta = db.read_sweep_meta(results_dir, plan.name)
    if stored_meta is None:
        return lambda: db.write_sweep(results_dir, plan.name, meta, rows)
    stored_rows = db.read_plan(results_dir, plan.name).to_pylist()
    change = plan_change(stored_meta, stored_rows, meta, rows)
    if change.same:
        return lambda: None
    if change.extends_only or (merge and not change.differences):
        said = f"{change.extension()}; finished cells are kept"
        return lambda: _write(results_dir, plan.name, meta, merged_rows(stored_rows, rows), said)
    if not replace:
        raise ConfigError(
            f"sweep {plan.name!r} in {results_dir} already has a different plan: {change.refusal()}. Rerun with "
            f"--replace to make this its plan (the old one is kept: `harness sweeps {plan.name} --history`), or with "
            f"--name NEW to run it as another sweep.")
    return lambda: _replace(results_dir, plan.name, meta, rows, change.refusal())


def _write(results_dir: Path, sweep: str, meta: dict, rows: list, said: str) -> None:
    import db

    db.write_sweep(results_dir, sweep, meta, rows)
    print(f"harness sweep: {sweep}: the plan {said}.", file=sys.stderr)


def _replace(results_dir: Path, sweep: str, meta: dict, rows: list, differences: str) -> None:
    import db

    archived = db.archive_plan(results_dir, sweep)
    _write(results_dir, sweep, meta, rows, f"replaces the earlier one ({differences}), kept in {archived}")
