"""Confirmation cells in the store: `db.write_confirmation` writes a search's confirmation cell once, it shows in
`sweep_cells` with `confirms` (the trial it reruns) and no `trial`, and plans and trial files written before the
column existed still read, with `confirms` NULL."""

import json

import pyarrow as pa
import pyarrow.parquet as pq

import db
from db.sweeps import CELL_SCHEMA, TRIALS_DIR


def _row(arm, lr, seed, run_id, **extra):
    return {"arm": arm, "lr": lr, "seed": seed, "run_id": run_id, "arm_values": json.dumps({"lr": lr}), **extra}


def _old_file(path, row):
    """A cell file in the schema before `confirms` existed."""
    old_schema = pa.schema([f for f in CELL_SCHEMA if f.name != "confirms"])
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([row], schema=old_schema), path)


def test_a_confirmation_cell_is_written_once_and_shows_what_it_confirms(results, write_run):
    write_run(results, "t0", sweep="s", arm="a")
    write_run(results, "c0", sweep="s", arm="a", seed=1_000_000)
    db.write_sweep(results, "s", {}, [])
    db.write_trial(results, "s", 0, _row("a", 1e-3, 0, "t0", trial=0))
    db.write_confirmation(results, "s", 0, 0, _row("a", 1e-3, 1_000_000, "c0", confirms=0))
    db.write_confirmation(results, "s", 0, 0, _row("a", 1e-3, 1_000_000, "other", confirms=5))  # a later worker: no-op
    rows = db.connect(results).execute(
        "SELECT run_id, seed, trial, confirms, status FROM sweep_cells WHERE sweep = 's' ORDER BY run_id").fetchall()
    assert rows == [("c0", 1_000_000, None, 0, "completed"), ("t0", 0, 0, None, "completed")]


def test_plans_and_trials_written_before_confirms_read_with_it_null(results, write_run):
    write_run(results, "k1", sweep="old", arm="a")
    folder = db.sweep_dir(results, "old")
    _old_file(folder / "cells.parquet", {**_row("a", 1e-3, 0, "k1"), "sweep": "old", "cell": 0})
    _old_file(folder / TRIALS_DIR / "s0000-t000000.parquet", {**_row("a", 2e-3, 0, "k2", trial=0), "sweep": "old"})
    (folder / "sweep.json").write_text(json.dumps({"sweep": "old", "question": "?", "baseline": "a", "axes": []}))
    rows = db.connect(results).execute(
        "SELECT run_id, trial, confirms, status FROM sweep_cells WHERE sweep = 'old' ORDER BY run_id").fetchall()
    assert rows == [("k1", None, None, "completed"), ("k2", 0, None, "pending")]


def test_a_new_confirmation_beside_old_trial_files_reads_by_name(results, write_run):
    write_run(results, "c0", sweep="mixed", arm="a", seed=1_000_000)
    db.write_sweep(results, "mixed", {}, [])
    _old_file(db.sweep_dir(results, "mixed") / TRIALS_DIR / "s0000-t000000.parquet",
              {**_row("a", 2e-3, 0, "t0", trial=0), "sweep": "mixed"})
    db.write_confirmation(results, "mixed", 0, 0, _row("a", 2e-3, 1_000_000, "c0", confirms=0))
    rows = db.connect(results).execute(
        "SELECT run_id, trial, confirms FROM sweep_cells WHERE sweep = 'mixed' ORDER BY run_id").fetchall()
    assert rows == [("c0", None, 0), ("t0", 0, None)]


def test_runs_without_a_plan_have_no_confirms(results, write_run):
    write_run(results, "w1", sweep="hand", arm="x")
    assert db.connect(results).execute("SELECT confirms FROM sweep_cells WHERE sweep = 'hand'").fetchall() == [(None,)]
