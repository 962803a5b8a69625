"""What connecting does with a damaged file: `store_damage` names it, a run with a damaged shard is `damaged` (never
`running` nor a result), and a sweep whose plan is damaged is left out, never shown as a sweep of another shape."""

import pytest

import db


def _planned(results, write_run):
    for seed in range(2):
        write_run(results, f"r{seed}", sweep="s", arm="a", seed=seed)
    cells = [{"arm": "a", "lr": 1e-3, "seed": seed, "run_id": f"r{seed}"} for seed in range(3)]
    db.write_sweep(results, "s", {"baseline": "a"}, cells)


def _truncate(path):
    path.write_bytes(path.read_bytes()[:40])


def _connect(results):
    with pytest.warns(db.CorruptShardWarning):
        return db.connect(results)


@pytest.mark.parametrize("table", ["status", "metrics"])
def test_a_run_with_a_damaged_shard_is_damaged_not_running_nor_finished(results, write_run, table):
    _planned(results, write_run)
    _truncate(next((results / "runs" / "r1" / table).glob("*.parquet")))
    con = _connect(results)
    runs = con.execute("SELECT run_id, status FROM runs ORDER BY run_id").fetchall()
    assert runs == [("r0", "completed"), ("r1", "damaged")]
    assert con.execute("SELECT run_id, status FROM sweep_cells ORDER BY run_id").fetchall() == [
        ("r0", "completed"), ("r1", "damaged"), ("r2", "pending")]
    assert con.execute("SELECT n_cells, completed, damaged, pending FROM sweeps").fetchall() == [(3, 1, 1, 1)]
    assert con.execute("SELECT path, kind, run_id, sweep FROM store_damage").fetchall() == [
        (f"runs/r1/{table}/s0000{'-000000' if table == 'metrics' else ''}.parquet", f"{table} shard", "r1", None)]


def test_a_run_whose_only_manifest_is_damaged_is_a_damaged_cell(results, write_run):
    _planned(results, write_run)
    _truncate(results / "runs" / "r1" / "manifest" / "s0000.parquet")
    con = _connect(results)
    assert con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall() == [("r0",)]  # nothing says what r1 is
    assert con.execute("SELECT status FROM sweep_cells WHERE run_id = 'r1'").fetchall() == [("damaged",)]


def test_a_sweep_with_a_damaged_plan_is_left_out_not_shown_as_its_runs(results, write_run):
    _planned(results, write_run)
    (results / "sweeps" / "s" / "sweep.json").write_text('{"sweep": "s", "baseline": ')
    with pytest.warns(db.CorruptShardWarning, match="leaving out sweep 's': .*sweep.json is damaged"):
        con = db.connect(results)
    assert con.execute("SELECT count(*) FROM sweeps").fetchone() == (0,)  # not an implicit sweep of its 2 runs
    assert con.execute("SELECT count(*) FROM sweep_cells").fetchone() == (0,)
    damage = con.execute("SELECT path, kind, sweep FROM store_damage").fetchall()
    assert damage == [("sweeps/s/sweep.json", "sweep meta", "s")]
    assert con.execute("SELECT count(*) FROM runs WHERE status = 'completed'").fetchone() == (2,)  # the runs are intact


def test_reading_a_damaged_plan_names_it_in_one_line(results, write_run):
    _planned(results, write_run)
    _truncate(results / "sweeps" / "s" / "cells.parquet")
    with pytest.raises(db.StoreDamage, match=r"^sweep 's' cannot be read: .*cells.parquet is damaged \(") as caught:
        db.read_plan(results, "s")
    assert "\n" not in str(caught.value) and caught.value.paths == (str(results / "sweeps" / "s" / "cells.parquet"),)
