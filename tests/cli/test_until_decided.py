"""`harness sweep --until-decided`: a tiny real sweep adds a round of seeds and stops once its comparison is
decided (the decision checked against the scipy oracle on the stored losses), a rerun trains nothing, the
round arithmetic adds seeds only where undecided, and bad input is one line with exit 2 before any write."""

import subprocess
import sys
from pathlib import Path

import pytest

import db
from cli.main import main
from cli.until_decided import grow, seed_counts

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the oracle of the sequential tests
from sequential_oracle import oracle_decision  # noqa: E402

ABLATION = '''
from experiments import Ablation, grid, ladder, Uniform

ablation = Ablation(
    "{name}", "Does a warmup longer than the run lose after a few steps?", base="tiny", grid={grid}, seeds=4,
    lrs=[1e-2], baseline={baseline}, {extra}
    train=dict(steps=6, batch_size=4, seq_len=32, warmup_steps=0, val_every=6, val_seqs=4, probe_every=10,
               probe_seqs=2, checkpoint_every=100),
    data=dict(source={source!r}, cache_dir={cache_dir!r}, val_tokens={val_tokens}),
)
'''


@pytest.fixture
def ablation(tmp_path, train_data_cfg):
    def write(name="warmup", grid="grid(warmup_steps=[0, 100])", baseline="None", extra=""):
        path = tmp_path / f"{name}.py"
        path.write_text(ABLATION.format(name=name, grid=grid, baseline=baseline, extra=extra,
                                        source=train_data_cfg.source, cache_dir=train_data_cfg.cache_dir,
                                        val_tokens=train_data_cfg.val_tokens))
        return path
    return write


def until_decided(path, results, *extra):
    command = [sys.executable, "-m", "cli.main", "sweep", str(path), "--results", str(results), "--set",
               "vocab_size=512", "--no-report", "--no-progress", "--until-decided", "--seed-batch", "2", "--max-seeds",
               "10", *extra]
    return subprocess.run(command, capture_output=True, text=True)


@pytest.mark.slow
def test_seeds_are_added_in_rounds_until_decided_and_a_rerun_trains_nothing(ablation, tmp_path):
    path, results = ablation(), tmp_path / "results"
    done = until_decided(path, results)
    assert done.returncode == 0, done.stderr
    con = db.connect(results)
    cells = con.execute("SELECT c.arm, c.seed, r.final_val_loss, r.n_segments FROM sweep_cells c JOIN runs r USING "
                        "(run_id) WHERE c.sweep = 'warmup' ORDER BY c.seed").fetchall()
    by_arm = {arm: {seed: loss for a, seed, loss, _ in cells if a == arm} for arm in {a for a, *_ in cells}}
    slow = "warmup_steps=100"  # an LR ramp of 100 steps: ~6% of the LR by step 6
    seeds = sorted(by_arm[slow])
    assert sorted(by_arm["base"]) == seeds == list(range(len(seeds)))
    verdict, decided_at = oracle_decision([by_arm[slow][s] - by_arm["base"][s] for s in seeds], 0.01)
    # Rounds of 4, 6, 8, 10 seeds: the first round with at least `decided_at` pairs is the last (never before
    # 5 pairs, so at least one round of seeds was added), and it stopped before --max-seeds.
    assert verdict == "worse" and seeds[-1] + 1 == next(n for n in (6, 8, 10) if n >= decided_at) < 10
    rounds = (len(seeds) - 4) // 2 + 1
    assert f"round {rounds}:" in done.stderr and f"round {rounds + 1}:" not in done.stderr
    assert f"{slow} lr=0.01: worse at {decided_at} matched seeds" in done.stderr
    again = until_decided(path, results)
    assert again.returncode == 0, again.stderr
    cells_now = 2 * len(seeds)
    assert (f"{cells_now} cells ({cells_now} already finished)" in again.stderr
            and f"round {rounds + 1}:" not in again.stderr)
    segments = db.connect(results).execute("SELECT r.n_segments FROM sweep_cells c "
                                           "JOIN runs r USING (run_id)").fetchall()
    assert {n for (n,) in segments} == {1}  # every cell trained once, in its round
    # the rounds that added seeds are on record, and the declared command is the same sweep (nothing to train)
    seeding = db.read_sweep_meta(results, "warmup")["seeding"]
    assert [r["round"] for r in seeding["rounds"]] == list(range(2, rounds + 1))
    assert [r["seeds"] for r in seeding["rounds"]] == [4 + 2 * (r - 1) for r in range(2, rounds + 1)]
    declared = subprocess.run([sys.executable, "-m", "cli.main", "sweep", str(path), "--results", str(results), "--set",
                               "vocab_size=512", "--no-report", "--no-progress"], capture_output=True, text=True)
    assert declared.returncode == 0, declared.stderr
    assert ("keeps the seeds --until-decided added" in declared.stderr
            and "8 cells (8 already finished)" in declared.stderr)
    history = subprocess.run([sys.executable, "-m", "cli.main", "sweeps", "warmup", "--history", "--results",
                              str(results)],
                             capture_output=True, text=True)
    assert (f"until-decided round {rounds}" in history.stdout
            and f"seeds up to {seeds[-1] + 1} per arm and LR" in history.stdout)


def test_undecided_pairs_grow_by_the_batch_to_the_cap_and_the_baseline_follows_its_arms():
    targets = {("a", 0.1): 3, ("b", 0.1): 3, ("a", 0.01): 8}
    grown = grow(targets, [("a", 0.1), ("a", 0.01)], batch=2, max_seeds=9)
    assert grown == {("a", 0.1): 5, ("b", 0.1): 3, ("a", 0.01): 9}  # b decided: no more seeds; a at 0.01 capped
    assert seed_counts(grown, "base") == {**grown, ("base", 0.1): 5, ("base", 0.01): 9}


@pytest.mark.parametrize("extra, kind, message", [
    (["--until-decided", "--seed-batch", "0"], {}, "--seed-batch 0 is invalid: must be ≥ 1."),
    (["--until-decided", "--max-seeds", "2"], {}, "--max-seeds 2 is invalid: the sweep already has 4 seeds"),
    (["--until-decided", "--max-seeds", "4"], {}, "so there are no seeds to add; give more than 4."),
    (["--max-seeds", "5"], {}, "--max-seeds needs --until-decided."),
    (["--until-decided", "--dry-run"], {}, "--until-decided and --dry-run: give one"),
    (["--until-decided"], {"grid": "grid()", "baseline": "None"}, "has one arm: there is no comparison"),
    (["--until-decided"], {"grid": "grid(qk_norm=['none', 'rmsnorm'])", "baseline": "None",
                           "extra": "tune={'weight_decay': Uniform(0.0, 0.1)}, trials=2, tune_per_seed=True,"},
     "is a search (tune=)"),
    (["--until-decided"], {"extra": "ladder=ladder(d_model=[32, 64], n_heads=[2, 4], tokens=4096),"},
     "is a scale ladder"),
])
def test_bad_input_is_one_line_and_exit_2_before_anything_is_written(ablation, tmp_path, capsys, extra, kind, message):
    results = tmp_path / "results"
    assert main(["sweep", str(ablation(**kind)), "--results", str(results), "--set", "vocab_size=512", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness sweep: error:") and message in err and len(err.strip().splitlines()) == 1
    assert not results.exists()
