"""`harness sweep` end to end with real worker processes: every cell exactly once through a SIGKILL of the
whole sweep, a killed worker, and two sweeps started at once; a finished sweep trains nothing."""

import os
import signal

import pytest

import db
from experiments import expand
from experiments.declare.load import load_ablation
from experiments.workers.claims import current_claim

from .conftest import finished_segments, kill_group, processes_mentioning, start_sweep, wait_for


def cell_ids(ablation_path):
    return [c.run_id for c in expand(load_ablation(str(ablation_path))[0], overrides={"vocab_size": 512}).cells]


def n_finished(results, run_ids):
    return sum(1 for r in run_ids if db.run_state(results, r).result)


@pytest.mark.slow
def test_sigkill_of_the_whole_sweep_then_the_same_command_finishes_each_cell_once(tmp_path, ablation_file):
    path = ablation_file(seeds=2, lrs=(1e-3, 3e-3), steps=40, checkpoint_every=10)
    ids, results = cell_ids(path), tmp_path / "results"
    sweep = start_sweep(path, results, "--workers", "2")
    wait_for(lambda: n_finished(results, ids) >= 2)
    finished_before = {r: db.run_state(results, r).segments for r in ids if db.run_state(results, r).result}
    kill_group(sweep)
    assert n_finished(results, ids) < len(ids)

    again = start_sweep(path, results, "--workers", "2")
    _, err = again.communicate()
    assert again.returncode == 0, err
    for run_id in ids:
        assert finished_segments(results, run_id) == ["completed"], run_id  # once, whatever happened before
    for run_id, segments in finished_before.items():
        assert db.run_state(results, run_id).segments == segments  # nothing finished was trained again
    con = db.connect(results)
    assert (sorted(r for (r,) in con.execute("SELECT run_id FROM sweep_cells WHERE sweep = 't'").fetchall())
            == sorted(ids))
    steps = con.execute("SELECT run_id, count(*), count(DISTINCT step), max(step) FROM metrics "
                        "WHERE name = 'train_loss' GROUP BY run_id").fetchall()
    assert all(n == distinct == last == 40 for _, n, distinct, last in steps)  # no gap, no repeat after the crash

    segments = {r: db.run_state(results, r).segments for r in ids}
    third = start_sweep(path, results, "--workers", "2")
    _, err = third.communicate()
    assert third.returncode == 0 and "(8 already finished)" in err
    assert {r: db.run_state(results, r).segments for r in ids} == segments  # a finished sweep trains nothing
    assert processes_mentioning(str(results)) == []  # and its workers, started on standby, were ended


@pytest.mark.slow
def test_a_killed_workers_cell_is_taken_over_and_resumes_from_its_checkpoint(tmp_path, ablation_file):
    path = ablation_file(steps=60, checkpoint_every=10)  # 50 steps left after the first checkpoint to kill it in
    ids, results = cell_ids(path), tmp_path / "results"
    sweep = start_sweep(path, results, "--workers", "1")
    held = []

    def busy_past_a_checkpoint():
        info = current_claim(results, ids[0])
        if info is not None and not info.released and (results / "checkpoints" / ids[0] / "last.ckpt").exists():
            held.append(info)
        return bool(held)

    wait_for(busy_past_a_checkpoint, every=0.05)
    os.kill(held[0].pid, signal.SIGKILL)  # the worker, mid-cell (the claim was read while it trained this cell)
    _, err = sweep.communicate()
    assert sweep.returncode == 0, err
    assert "exited with -9; starting a new one" in err
    state = db.run_state(results, ids[0])
    assert len(state.segments) == 2 and finished_segments(results, ids[0]) == ["completed"]
    con = db.connect(results)
    (start,) = con.execute("SELECT max(start_step) FROM _manifests WHERE run_id = ?", [ids[0]]).fetchone()
    assert start > 1 and (start - 1) % 10 == 0  # resumed after its last checkpoint (every 10 steps), not from step 0
    steps = [s for (s,) in con.execute("SELECT step FROM metrics WHERE run_id = ? AND name = 'train_loss' "
                                       "ORDER BY step", [ids[0]]).fetchall()]
    assert steps == list(range(1, 61))


@pytest.mark.slow
def test_two_sweeps_started_at_once_train_no_cell_twice(tmp_path, ablation_file):
    path = ablation_file(seeds=2, lrs=(1e-3,), steps=10)
    ids, results = cell_ids(path), tmp_path / "results"
    first, second = start_sweep(path, results), start_sweep(path, results)
    for process in (first, second):
        _, err = process.communicate()
        assert process.returncode == 0, err
    for run_id in ids:
        assert len(db.run_state(results, run_id).segments) == 1 and finished_segments(results, run_id) == ["completed"]


@pytest.mark.parametrize("make, extra, message", [
    (lambda tmp, f: "qk_stabilty", [], "no ablation 'qk_stabilty' in the library; did you mean 'qk_stability'?"),
    (lambda tmp, f: str(tmp / "nothing.py"), [], "defines no Ablation"),
    (lambda tmp, f: str(f()), ["--set", "qk_nrom=rmsnorm"], "--set names no field 'qk_nrom'; did you mean 'qk_norm'?"),
    (lambda tmp, f: str(f()), ["--set", "n_heads=3"], "ModelConfig.n_heads=3 is invalid"),
    (lambda tmp, f: str(tmp / "bad_cells.py"), [],
     "2 of 3 cells are invalid:\n  n_heads=3: ModelConfig.n_heads=3 is invalid"),
    (lambda tmp, f: str(tmp / "bad_cells.py"), ["--set", "bias=qkv", "--seeds", "0"], "--seeds 0 is invalid"),
    (lambda tmp, f: str(f()), ["--devices", "gpu0"], "--devices 'gpu0' is invalid"),
    (lambda tmp, f: str(f()), ["--status"], "no sweep 't'"),
])
def test_bad_input_is_one_message_and_exit_2_before_any_compute(tmp_path, ablation_file, capsys, make, extra, message):
    from cli.main import main

    (tmp_path / "nothing.py").write_text("x = 1\n")
    (tmp_path / "bad_cells.py").write_text(
        "from experiments import Ablation, grid\n"
        "ablation = Ablation('bad', 'q?', base='tiny', grid=grid(n_heads=[3, 4, 5]))\n")
    results = tmp_path / "results"
    code = main(["sweep", make(tmp_path, ablation_file), "--results", str(results), "--no-report", *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.startswith("harness sweep: error:")
    assert not (results / "runs").exists() and not (results / "sweeps").exists()


def test_dry_run_lists_every_cell_and_trains_nothing(tmp_path, ablation_file, capsys):
    from cli.main import main

    path = ablation_file(seeds=2, lrs=(1e-3, 1e-2))
    assert main(["sweep", str(path), "--results", str(tmp_path / "results"), "--set", "vocab_size=512",
                 "--dry-run"]) == 0
    out = capsys.readouterr().out
    for run_id in cell_ids(path):
        assert run_id in out
    assert "t: 8 cells, 2 arms, baseline 'base'; 0 already finished. Estimated time with 1 worker(s):" in out
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_keep_checkpoints_reaches_every_cell_of_a_sweep(tmp_path, ablation_file):
    """--keep-checkpoints travels from the command line to each worker (handed over on standby) and its runs."""
    from harness.train.checkpoints import checkpoint_dir

    path, results = ablation_file(steps=6, checkpoint_every=2), tmp_path / "results"
    sweep = start_sweep(path, results, "--workers", "2", "--keep-checkpoints", "all", "--no-progress")
    assert sweep.wait() == 0, sweep.communicate()[1]
    for run_id in cell_ids(path):
        kept = sorted(p.name for p in checkpoint_dir(results, run_id).glob("step*.ckpt"))
        assert kept == ["step0000002-g0.ckpt", "step0000004-g0.ckpt", "step0000006-g0.ckpt"], (run_id, kept)  # claim g0
