"""`harness sweep`'s plan identity (docs/sweeps.md): a launch under a sweep name that already has a plan may run
that plan again or add seeds to it; anything else is refused before anything is written, unless `--replace`
(the old plan moves to the sweep's history) or another `--name`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable


def settle_plan(plan, source: str, results_dir: Path, *, replace: bool, merge: bool = False,
                seeding_round: dict | None = None) -> Callable[[], object]:
    """Check the launch against the sweep's stored plan and return the write to make once every other check
    passed (a no-op when the plans agree, so a relaunch leaves the store as it was). `merge`: a round of
    --until-decided, whose seed counts may differ from the stored ones either way (the union is kept);
    `seeding_round`: that round's record when it adds seeds (kept in sweep.json's `seeding`, which tells every
    reader that only the anytime-valid decisions hold)."""
    import db
    from errors import ConfigError
    from experiments.plan.identity import merged_rows, plan_change

    declared, rows = plan.meta(source), [cell.plan_row() for cell in plan.plan_cells]
    stored_meta = db.read_sweep_meta(results_dir, plan.name)
    if stored_meta is None:
        return lambda: db.write_sweep(results_dir, plan.name, _seeded(declared, None, seeding_round), rows)
    meta = _seeded(declared, stored_meta.get("seeding"), seeding_round)
    stored_rows = db.read_plan(results_dir, plan.name).to_pylist()
    change = plan_change(stored_meta, stored_rows, meta, rows)
    if change.same:  # a new round's record or the ablation's primary signal is the only change, if any
        same = all(meta.get(name) == stored_meta.get(name) for name in ("seeding", "primary"))
        return (lambda: None) if same else (lambda: db.write_sweep(results_dir, plan.name, meta, stored_rows))
    seeds = change.seeds  # (stored, declared) per arm and LR at most, set whenever the counts differ
    if stored_meta.get("seeding") and not merge and not change.differences and change.fewer and seeds:
        # the declared command again after --until-decided added seeds: the same sweep, its added seeds kept
        return lambda: print(f"harness sweep: {plan.name}: the plan keeps the seeds --until-decided added "
                             f"({seeds[0]} per arm and LR at most).", file=sys.stderr)
    if change.extends_only or (merge and not change.differences):
        said = f"{change.extension()}; finished cells are kept"
        return lambda: _write(results_dir, plan.name, meta, merged_rows(stored_rows, rows), said)
    if not replace:
        raise ConfigError(
            f"sweep {plan.name!r} in {results_dir} already has a different plan: {change.refusal()}. Rerun with "
            f"--replace to make this its plan (the old one is kept: `harness sweeps {plan.name} --history`), or with "
            f"--name NEW to run it as another sweep.")
    return lambda: _replace(results_dir, plan.name, declared, rows, change.refusal())


def _seeded(meta: dict, stored: dict | None, round_record: dict | None) -> dict:
    """`meta` with the sweep's seeding record: the stored one, with this --until-decided round's entry set."""
    if stored is None and round_record is None:
        return meta
    seeding = dict(stored or {"rule": "until-decided", "rounds": []})
    if round_record is not None:
        rounds = [r for r in seeding["rounds"] if r["round"] != round_record["round"]]
        seeding["rounds"] = sorted([*rounds, round_record], key=lambda r: r["round"])
    return {**meta, "seeding": seeding}


def _write(results_dir: Path, sweep: str, meta: dict, rows: list, said: str) -> None:
    import db

    db.write_sweep(results_dir, sweep, meta, rows)
    print(f"harness sweep: {sweep}: the plan {said}.", file=sys.stderr)


def _replace(results_dir: Path, sweep: str, meta: dict, rows: list, differences: str) -> None:
    import db

    archived = db.archive_plan(results_dir, sweep)
    _write(results_dir, sweep, meta, rows, f"replaces the earlier one ({differences}), kept in {archived}")
