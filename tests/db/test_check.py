"""`db.check.check_store` names every damaged or orphaned file with what it affects, and `db.quarantine.repair`
moves it (with the run or plan it spoils) under quarantine/<timestamp>/, byte for byte, deleting nothing."""

import json
import os
import zipfile

import pyarrow.parquet as pq

import db
from db.check import affects, check_store, report_line
from db.quarantine import repair


def _planned(results, write_run, sweep="s", seeds=2):
    """A finished planned sweep: arms a and b, `seeds` seeds; runs `<sweep>-<arm>-<seed>`."""
    cells = []
    for arm in ("a", "b"):
        for seed in range(seeds):
            run_id = f"{sweep}-{arm}-{seed}"
            write_run(results, run_id, sweep=sweep, arm=arm, seed=seed)
            cells.append({"arm": arm, "lr": 1e-3, "seed": seed, "run_id": run_id})
    db.write_sweep(results, sweep, {"question": "?", "baseline": "a", "source": "s.py"}, cells)


def _shard(results, run_id, table):
    return next((results / "runs" / run_id / table).glob("*.parquet"))


def _truncate(path):
    path.write_bytes(path.read_bytes()[:40])


def test_a_clean_store_has_no_findings(results, write_run):
    _planned(results, write_run)
    check = check_store(results)
    assert check.findings == [] and check.checked == 4 * 3 + 2  # 4 runs × (manifest, status, metrics) + the plan


def test_every_damaged_file_is_one_finding_naming_what_it_costs(results, write_run):
    _planned(results, write_run)
    _truncate(_shard(results, "s-b-1", "status"))
    (results / "sweeps" / "s" / "sweep.json").write_text("{")
    check = check_store(results)
    assert [report_line(check, finding) for finding in check.findings] == [
        "runs/s-b-1/status/s0000.parquet: status shard: no Parquet magic bytes at start or end (truncated or "
        "overwritten); affects run s-b-1 (sweep s cell 3: b lr=0.001 seed=1): shown as damaged, and refused by "
        "compare, summary and report",
        "sweeps/s/sweep.json: sweep meta: not valid JSON (Expecting property name enclosed in double quotes at line 1 "
        "column 2: truncated or garbled); affects sweep s: left out of every listing; compare, summary, report and "
        "sweep --status refuse it",
    ]  # the plan itself reads whole, so the run is named with its cell though the sweep's description is damaged


def test_a_damaged_run_is_named_with_its_cells(results, write_run):
    _planned(results, write_run)
    _truncate(_shard(results, "s-b-1", "metrics"))
    check = check_store(results)
    assert [affects(check, f) for f in check.findings] == [
        "run s-b-1 (sweep s cell 3: b lr=0.001 seed=1): shown as damaged, and refused by compare, summary and report"]


def test_orphans_are_named_apart_from_damage(results, write_run):
    _planned(results, write_run)
    db.RunWriter.open(results, "s-a-0", resume=True, resume_from_step=30).close()
    (results / "runs" / "s-a-0" / "manifest" / "s0001.parquet").unlink()  # segment 1's status outlives its manifest
    (results / "checkpoints" / "gone").mkdir(parents=True)
    (results / "checkpoints" / "gone" / "step4-g0.ckpt").write_bytes(b"PK")
    (results / "sweeps" / "half").mkdir()
    plan = (results / "sweeps" / "s" / "cells.parquet").read_bytes()
    (results / "sweeps" / "half" / "cells.parquet").write_bytes(plan)
    found = {(f.path, f.kind, f.problem, f.orphan) for f in check_store(results).findings}
    assert found == {
        ("runs/s-a-0/status/s0001.parquet", "orphaned status shard", "its segment has no manifest shard", True),
        ("checkpoints/gone", "orphaned checkpoints", "the store has no run gone", True),
        ("sweeps/half/cells.parquet", "half a plan", "its sweep.json is missing", True),
    }


def test_an_edited_description_fails_its_checksum(results, write_run):
    _planned(results, write_run)
    path = results / "sweeps" / "s" / "sweep.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "baseline": "b"}))  # valid JSON, another baseline
    assert [(f.path, f.problem) for f in check_store(results).findings] == [
        ("sweeps/s/sweep.json", "its contents do not match its checksum (garbled or edited)")]


def test_a_plan_shorter_than_its_description_is_damaged(results, write_run):
    _planned(results, write_run)
    cells = results / "sweeps" / "s" / "cells.parquet"
    pq.write_table(pq.read_table(cells).slice(0, 3), cells)
    assert [(f.path, f.problem) for f in check_store(results).findings] == [
        ("sweeps/s/cells.parquet", "3 cells where its sweep.json says 4")]


def test_repair_moves_the_damaged_run_and_its_checkpoints_aside_and_says_what_retrains(results, write_run):
    _planned(results, write_run)
    _truncate(_shard(results, "s-b-1", "metrics"))
    ckpt = results / "checkpoints" / "s-b-1"
    ckpt.mkdir(parents=True)
    with zipfile.ZipFile(ckpt / "step3-g0.ckpt", "w") as archive:  # a checkpoint is a zip archive
        archive.writestr("data.pkl", b"weights")
    weights = (ckpt / "step3-g0.ckpt").read_bytes()
    before = {p.relative_to(results): p.read_bytes() for p in (results / "runs" / "s-b-1").rglob("*") if p.is_file()}
    done = repair(check_store(results))
    assert [source for source, _ in done.moved] == ["runs/s-b-1", "checkpoints/s-b-1"]
    assert done.retrain == ["the next `harness sweep` of s trains cell 3: b lr=0.001 seed=1 (s-b-1) again"]
    moved = {p.relative_to(done.folder): p.read_bytes() for p in (done.folder / "runs").rglob("*") if p.is_file()}
    assert moved == before  # every byte kept, at the same relative path
    assert (done.folder / "checkpoints" / "s-b-1" / "step3-g0.ckpt").read_bytes() == weights
    assert check_store(results).findings == []
    cell = db.connect(results).execute("SELECT status FROM sweep_cells WHERE run_id = 's-b-1'").fetchall()
    assert cell == [("pending",)]


def test_repair_of_a_damaged_plan_moves_the_plan_and_keeps_every_run(results, write_run):
    _planned(results, write_run)
    db.write_trial(results, "s", 0, {"arm": "a", "lr": 1e-3, "seed": 0, "run_id": "s-a-0", "trial": 0})
    _truncate(results / "sweeps" / "s" / "cells.parquet")
    done = repair(check_store(results))
    assert sorted(source for source, _ in done.moved) == ["sweeps/s/cells.parquet", "sweeps/s/sweep.json",
                                                          "sweeps/s/trials"]
    assert done.retrain[0].startswith("sweep s has no plan now: launching it again")
    assert sorted(os.listdir(results / "runs")) == ["s-a-0", "s-a-1", "s-b-0", "s-b-1"]
    assert check_store(results).findings == []


def test_repair_of_a_damaged_index_moves_the_index(results, write_run):
    from db.compact import compact

    _planned(results, write_run)
    compact(results)
    _truncate(results / "index" / "status.parquet")
    done = repair(check_store(results))
    assert done.moved == [("index", os.path.join(os.path.relpath(done.folder, results), "index"))]
    assert done.retrain == ["`harness db compact` writes a new index (nothing is trained again)"]


def test_a_second_repair_the_same_second_gets_its_own_folder(results, write_run):
    _planned(results, write_run)
    _truncate(_shard(results, "s-a-0", "status"))
    first = repair(check_store(results)).folder
    _truncate(_shard(results, "s-a-1", "status"))
    second = repair(check_store(results)).folder
    assert first != second and first.parent == second.parent == results / "quarantine"


def test_a_run_in_no_plan_is_left_to_its_owner(results, write_run):
    write_run(results, "by-hand", sweep=None, arm=None)
    _truncate(_shard(results, "by-hand", "status"))
    assert repair(check_store(results)).retrain == [
        "run by-hand is in no sweep's plan: train it again yourself (`harness run ... --run-id by-hand`)"]
