"""Provenance end to end (issue 24): the code is a copy of this source tree in a temporary git repository, run
from another directory that is a git repository of its own. Each run records the package checkout's
`git rev-parse HEAD`; after a second commit a relaunch says its cells' results were made by other code, and
`--rerun-changed` retrains exactly those cells, their old runs archived (nothing deleted)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import db

SOURCE = Path(__file__).resolve().parents[2]
PACKAGES = ("ablations", "analysis", "cli", "db", "errors", "experiments", "harness")
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path):
    """A git repository holding a copy of the packages, one commit; and a directory to run from that is another
    repository (so the working directory's commit, were it used, would show)."""
    root = tmp_path / "checkout"
    for package in PACKAGES:
        shutil.copytree(SOURCE / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "the code as tested")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("not the code\n")
    git(elsewhere, "init", "-q")
    git(elsewhere, "add", ".")
    git(elsewhere, "commit", "-q", "-m", "unrelated")
    return root, elsewhere


def harness(checkout, *args: str) -> subprocess.CompletedProcess:
    root, elsewhere = checkout
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, cwd=elsewhere,
                          env=env)


def commits(results: Path) -> dict[str, tuple]:
    sql = "SELECT run_id, git_commit, git_dirty, code_versions, started_at FROM runs"
    rows = db.connect(results).execute(sql).fetchall()
    return {run_id: rest for run_id, *rest in rows}


def change_the_code(root: Path) -> str:
    """A second commit (a comment in a module); its HEAD."""
    with open(root / "harness" / "provenance.py", "a") as module:
        module.write("# a fix\n")
    git(root, "commit", "-q", "-am", "a fix")
    return git(root, "rev-parse", "HEAD")


@pytest.mark.slow
def test_runs_record_the_package_commit_and_rerun_changed_retrains_exactly_the_changed_cells(checkout, ablation_file,
                                                                                             tmp_path):
    root, elsewhere = checkout
    results, ablation = tmp_path / "results", ablation_file(seeds=2, steps=4)
    sweep = ["sweep", str(ablation), "--results", str(results), "--set", "vocab_size=512", "--no-report",
             "--no-progress"]
    first = git(root, "rev-parse", "HEAD")
    assert first != git(elsewhere, "rev-parse", "HEAD")

    done = harness(checkout, *sweep)
    assert done.returncode == 0, done.stderr
    old = commits(results)
    assert len(old) == 4 and {(c, d, n) for c, d, n, _ in old.values()} == {(first, False, 1)}

    second = change_the_code(root)
    done = harness(checkout, *sweep)  # nothing to train: the results are reused, and the launch says by what code
    assert done.returncode == 0, done.stderr
    notice = (f"harness sweep: t: all 4 cells have results made by other code (4 by harness 0.1.0 @ {first[:7]} "
              f"(clean); this launch runs harness 0.1.0 @ {second[:7]} (clean)); they are reused: --rerun-changed "
              "retrains them under this code (the old runs are archived, not deleted).")
    assert notice in done.stderr.splitlines()
    assert commits(results) == old

    done = harness(checkout, *sweep, "--seeds", "3")  # two new cells, trained by the new code
    assert done.returncode == 0, done.stderr
    assert "4 of 6 cells have results made by other code" in done.stderr
    before = commits(results)
    new = {run_id for run_id, (commit, *_) in before.items() if commit == second}
    assert len(new) == 2 and set(before) - new == set(old)

    done = harness(checkout, *sweep, "--seeds", "3", "--rerun-changed")
    assert done.returncode == 0, done.stderr
    assert (f"harness sweep: t: retraining 4 of 6 cells whose results other code made (4 by harness 0.1.0 @ "
            f"{first[:7]} (clean); this launch runs harness 0.1.0 @ {second[:7]} (clean)); their old runs (4) moved to "
            f"{results / 'archive'}/<run_id>/.") in done.stderr.splitlines()
    after = commits(results)
    assert {(c, d, n) for c, d, n, _ in after.values()} == {(second, False, 1)}
    assert {run_id: after[run_id] for run_id in new} == {run_id: before[run_id] for run_id in new}  # untouched
    archived = {entry.parent.name: json.loads((entry / "why.json").read_text())
                for entry in (results / "archive").glob("*/0001")}
    assert set(archived) == set(old)  # exactly the changed cells, each kept whole with its checkpoints
    for run_id, why in archived.items():
        entry = results / "archive" / run_id / "0001"
        assert why["made_by"] == [{"harness_version": "0.1.0", "git_commit": first, "git_dirty": False}]
        assert why["retrained_by"] == {"harness_version": "0.1.0", "git_commit": second, "git_dirty": False}
        assert db.run_state(results, run_id).result == "completed"  # and the store holds the new run
        assert (entry / "run" / "manifest" / "s0000.parquet").is_file() and any((entry / "checkpoints").iterdir())

    with open(root / "harness" / "provenance.py", "a") as module:  # uncommitted: a dirty checkout
        module.write("# trying something\n")
    done = harness(checkout, *sweep, "--seeds", "3")
    assert done.returncode == 0, done.stderr
    assert (f"all 6 cells have results made by other code (6 by harness 0.1.0 @ {second[:7]} (clean); this launch runs "
            f"harness 0.1.0 @ {second[:7]} (dirty))") in done.stderr


@pytest.mark.slow
def test_harness_run_names_the_other_code_and_retrains_only_when_asked(checkout, train_data_cfg, tmp_path):
    root, _ = checkout
    results = tmp_path / "results"
    run = ["run", "--preset", "tiny", "--results", str(results), "--no-progress", "--data", train_data_cfg.source,
           "--set", f"cache_dir={train_data_cfg.cache_dir}", "--set", f"val_tokens={train_data_cfg.val_tokens}",
           "--set", "vocab_size=512", "--steps", "2", "--set", "seq_len=32", "--set", "batch_size=2",
           "--set", "warmup_steps=1", "--set", "val_every=2", "--set", "probe_every=2", "--set", "probe_seqs=1"]
    first = git(root, "rev-parse", "HEAD")
    assert harness(checkout, *run).returncode == 0
    (run_id, (commit, dirty, versions, _)), = commits(results).items()
    assert (commit, dirty, versions) == (first, False, 1)

    second = change_the_code(root)
    done = harness(checkout, *run)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.endswith(f"Its result was made by other code (1 by harness 0.1.0 @ {first[:7]} (clean); this "
                                f"launch runs harness 0.1.0 @ {second[:7]} (clean)): --rerun-changed archives it and "
                                "trains it again.\n")
    done = harness(checkout, *run, "--rerun-changed")
    assert done.returncode == 0, done.stderr
    entry = results / "archive" / run_id / "0001"
    assert f"harness run: {run_id}: its run made by other code moved to {entry}; training it again." in done.stderr
    assert [(c, d) for c, d, _, _ in commits(results).values()] == [(second, False)]
    assert (entry / "run").is_dir() and (entry / "checkpoints").is_dir()
    done = harness(checkout, *run, "--rerun-changed")  # made by this code now: refused as any existing run
    assert done.returncode == 2 and "already exists" in done.stderr and "other code" not in done.stderr
