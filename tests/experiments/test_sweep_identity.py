"""A sweep's plan is its identity: a relaunch that would change it is refused with one line naming what
differs, before anything is written (the store stays byte-for-byte as it was), unless --replace (the old plan
goes to the sweep's history) or --name; adding seeds extends the plan and keeps every finished cell."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import db

from .conftest import ABLATION, sweep_command

STEPS = 4


def write_ablation(path: Path, data_cfg, question="Does QK-norm help the tiny proxy?", name="t", steps=STEPS) -> Path:
    text = ABLATION.format(name=name, seeds=2, lrs=[1e-3], steps=steps, checkpoint_every=100, source=data_cfg.source,
                           cache_dir=data_cfg.cache_dir, val_tokens=data_cfg.val_tokens)
    path.write_text(text.replace("Does QK-norm help the tiny proxy?", question))
    return path


@pytest.fixture(scope="module")
def finished(tmp_path_factory, train_data_cfg):
    """(ablation file, results) of a finished 4-cell sweep `t`: 2 arms × 2 seeds, trained once for the module."""
    folder = tmp_path_factory.mktemp("identity")
    path, results = write_ablation(folder / "t.py", train_data_cfg), folder / "results"
    done = subprocess.run(sweep_command(path, results, "--no-progress"), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return path, results


@pytest.fixture
def store(finished, tmp_path):
    """A private copy of the finished sweep's store, and its ablation file."""
    path, results = finished
    shutil.copytree(results, tmp_path / "results", symlinks=True)
    return path, tmp_path / "results"


def digest(results: Path) -> dict[str, str]:
    """Every file of the store (and symlink target) with a hash of its bytes."""
    found = {}
    for item in sorted(results.rglob("*")):
        if item.is_symlink():
            found[str(item.relative_to(results))] = f"-> {item.readlink()}"
        elif item.is_file():
            found[str(item.relative_to(results))] = hashlib.sha256(item.read_bytes()).hexdigest()
    return found


def launch(path: Path, results: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(sweep_command(path, results, "--no-progress", *extra), capture_output=True, text=True)


def refused(path: Path, results: Path, *extra: str) -> str:
    """Launch, check it was refused with one line and exit 2 leaving the store untouched; the line."""
    before = digest(results)
    done = launch(path, results, *extra)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("harness sweep: error: sweep 't'")
    assert digest(results) == before
    return done.stderr


@pytest.mark.slow
def test_the_same_plan_again_trains_and_writes_nothing(store):
    path, results = store
    before = digest(results)
    done = launch(path, results)
    assert done.returncode == 0, done.stderr
    after = digest(results)
    assert {k: v for k, v in after.items() if "sweeps/t/" in k and "logs/" not in k} == \
        {k: v for k, v in before.items() if "sweeps/t/" in k and "logs/" not in k}
    assert {k for k in after if k.startswith("runs/")} == {k for k in before if k.startswith("runs/")}


@pytest.mark.parametrize("extra, named", [
    (("--steps", "3"), "steps 4 → 3"),
    (("--seeds", "1"), "seeds 2 → 1 (fewer: finished seeds would drop out)"),
    (("--set", "warmup_steps=1"), "warmup_steps 2 → 1"),
])
def test_a_different_plan_is_refused_naming_what_differs(store, extra, named):
    path, results = store
    line = refused(path, results, *extra)
    assert named in line and "--replace" in line and "--name" in line


def test_another_file_or_question_under_the_same_name_is_refused(store, tmp_path, train_data_cfg):
    path, results = store
    other = write_ablation(tmp_path / "other.py", train_data_cfg)
    assert f"source {json.dumps(str(path))} → {json.dumps(str(other))}" in refused(other, results)
    original = path.read_text()
    try:
        write_ablation(path, train_data_cfg, question="Is QK-norm worth it?")
        assert 'question "Does QK-norm help the tiny proxy?" → "Is QK-norm worth it?"' in refused(path, results)
    finally:
        path.write_text(original)


@pytest.mark.slow
def test_adding_seeds_keeps_every_finished_cell(store):
    path, results = store
    finished_runs = {r for (r,) in db.connect(results).execute("SELECT run_id FROM sweep_cells WHERE sweep = 't'")
                     .fetchall()}
    done = launch(path, results, "--seeds", "3")
    assert done.returncode == 0, done.stderr
    assert "the plan adds seeds (2 → 3 per arm and LR at most); finished cells are kept" in done.stderr
    rows = db.connect(results).execute("SELECT run_id, n_segments FROM sweep_cells JOIN runs USING (run_id) "
                                       "WHERE sweep_cells.sweep = 't'").fetchall()
    assert len(rows) == 6 and finished_runs <= {r for r, _ in rows} and all(n == 1 for _, n in rows)


@pytest.mark.slow
def test_replace_keeps_the_old_plan_in_the_history(store):
    path, results = store
    old = (results / "sweeps" / "t" / "cells.parquet").read_bytes()
    done = launch(path, results, "--steps", "3", "--replace")
    assert done.returncode == 0, done.stderr
    assert (results / "sweeps" / "t" / "history" / "0001" / "cells.parquet").read_bytes() == old
    con = db.connect(results)
    assert con.execute("SELECT DISTINCT steps FROM sweep_cells WHERE sweep = 't'").fetchall() == [(3,)]
    history = subprocess.run([sys.executable, "-m", "cli.main", "sweeps", "t", "--history", "--results", str(results)],
                             capture_output=True, text=True)
    assert history.returncode == 0, history.stderr
    assert "replaced 1" in history.stdout and "steps" in history.stdout


@pytest.mark.slow
def test_another_name_runs_as_another_sweep(store):
    path, results = store
    before = (results / "sweeps" / "t" / "cells.parquet").read_bytes()
    done = launch(path, results, "--steps", "3", "--name", "t3")
    assert done.returncode == 0, done.stderr
    assert (results / "sweeps" / "t" / "cells.parquet").read_bytes() == before
    assert (db.connect(results).execute("SELECT n_cells, completed FROM sweeps WHERE sweep = 't3'").fetchall()
            == [(4, 4)])


@pytest.mark.slow
def test_a_bad_device_count_is_refused_before_anything_is_written(store):
    path, results = store
    before = digest(results)
    for flag, option in (("--workers-per-device", "--workers-per-device"), ("--per-device", "--workers-per-device"),
                         ("--devices-per-cell", "--devices-per-cell")):
        done = launch(path, results, "--steps", "3", flag, "0")
        assert done.returncode == 2
        assert done.stderr.strip() == f"harness sweep: error: {option} 0 is invalid: must be an integer ≥ 1."
    assert digest(results) == before


def test_a_store_whose_plan_runs_one_arm_at_a_time_is_relaunched_as_it_is(store):
    """Plans were written arm-major before cells were interleaved seed-major: relaunching such a store trains
    nothing and leaves its plan as it was."""
    path, results = store
    meta = db.read_sweep_meta(results, "t")
    rows = sorted(db.read_plan(results, "t").to_pylist(), key=lambda r: (r["arm"], r["lr"], r["seed"]))
    assert [r["seed"] for r in db.read_plan(results, "t").to_pylist()] == [0, 0, 1, 1]  # written seed-major today
    described = {k: meta[k] for k in db.sweeps.META_FIELDS if k in meta and k not in ("n_cells", "created_at")}
    db.write_sweep(results, "t", described,
                   [{**{k: v for k, v in r.items() if k != "sweep"}, "cell": i} for i, r in enumerate(rows)])
    before = digest(results)
    done = launch(path, results)
    assert done.returncode == 0, done.stderr
    after = digest(results)
    assert {k: v for k, v in after.items() if "logs/" not in k and not k.startswith("claims/")} == \
        {k: v for k, v in before.items() if "logs/" not in k and not k.startswith("claims/")}
    assert [r["seed"] for r in db.read_plan(results, "t").to_pylist()] == [0, 1, 0, 1]
