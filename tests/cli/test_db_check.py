"""`harness db check [--repair]` end to end, each command a real process: a real sweep, one of its runs damaged; every
command says so in one line; the check names the file and the cell, the repair moves the run aside and says which
cell the next `harness sweep` trains again, and that sweep trains exactly that cell."""

from __future__ import annotations

import subprocess
import sys

import pytest

import db

ABLATION = '''
from experiments import Ablation, grid

ablation = Ablation(
    "t", "Does QK-norm help the tiny proxy?", base="tiny", grid=grid(qk_norm=["none", "rmsnorm"]), seeds=2,
    lrs=[1e-3], train=dict(steps=6, batch_size=4, seq_len=32, warmup_steps=2, val_every=6, val_seqs=4, probe_every=10,
    probe_seqs=2, checkpoint_every=100),
    data=dict(source={source!r}, cache_dir={cache_dir!r}, val_tokens={val_tokens}),
)
'''


def harness(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True)


@pytest.mark.slow
def test_check_names_the_damage_and_the_repair_retrains_exactly_the_lost_cell(tmp_path, train_data_cfg):
    ablation, results = tmp_path / "t.py", tmp_path / "results"
    ablation.write_text(ABLATION.format(source=train_data_cfg.source, cache_dir=train_data_cfg.cache_dir,
                                        val_tokens=train_data_cfg.val_tokens))
    sweep = [str(ablation), "--results", str(results), "--set", "vocab_size=512", "--no-report", "--no-progress"]
    assert harness("sweep", *sweep).returncode == 0
    cell = db.read_plan(results, "t").to_pylist()[3]
    status = next((results / "runs" / cell["run_id"] / "status").glob("*.parquet"))
    status.write_bytes(status.read_bytes()[:100])  # truncated: it once read as "still running"
    named = str(status.relative_to(results))

    listing = harness("sweeps", "--results", str(results))
    assert listing.returncode == 0 and listing.stderr.splitlines() == [
        f"harness sweeps: warning: {named} (status shard) is damaged: no Parquet magic bytes at start or end "
        f"(truncated or overwritten); run {cell['run_id']} shows as damaged (`harness db check`)"]
    assert listing.stdout.splitlines()[2].split()[:6] == ["t", "4", "3", "0", "0", "1"]  # 3 completed, 1 damaged
    compare = harness("compare", "t", "--results", str(results))
    assert compare.returncode == 2 and compare.stdout == "" and len(compare.stderr.splitlines()) == 1
    assert compare.stderr.startswith("harness compare: error: sweep 't' has 1 damaged run") and named in compare.stderr
    status_lines = harness("sweep", *sweep, "--status").stdout.splitlines()
    assert status_lines[0].startswith("sweep t: 3/4 done") and " · 1 damaged · 0 left" in status_lines[0]
    assert status_lines[1].startswith("  damaged: cell 3 ") and named in status_lines[1]

    check = harness("db", "check", "--results", str(results))
    assert check.returncode == 1 and check.stdout.splitlines()[0].startswith(f"{named}: status shard: ")
    label = f"cell 3: {cell['arm']} lr=0.001 seed=1"  # arm qk_norm=rmsnorm
    assert f"affects run {cell['run_id']} (sweep t {label})" in check.stdout
    repaired = harness("db", "check", "--repair", "--results", str(results))
    lines = repaired.stdout.splitlines()
    assert repaired.returncode == 1 and lines[-3].startswith(f"moved runs/{cell['run_id']} to quarantine/")
    assert lines[-2].startswith(f"moved checkpoints/{cell['run_id']} to quarantine/")
    assert lines[-1] == f"the next `harness sweep` of t trains {label} ({cell['run_id']}) again"
    assert harness("db", "check", "--results", str(results)).returncode == 0

    rerun = harness("sweep", *sweep)
    assert rerun.returncode == 0 and "4 cells (3 already finished)" in rerun.stderr
    assert db.run_state(results, cell["run_id"]).statuses == {0: "completed"}  # trained afresh, from its start
    assert harness("compare", "t", "--results", str(results)).returncode == 0
