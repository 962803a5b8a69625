"""`harness decisions --run` end to end on a shrunken benchmark (two decisions, two rungs, two LRs, two seeds, a few
steps; the module's constants patched, every launch a real `harness sweep` with real workers): stage 1 tunes, each
arm's best LR is the LR sensitivity's, the ladders carry it and adopt the tuning sweep's runs at the smallest rung,
the analysis is printed, and the same command again trains nothing."""

import re

import pytest

import db
from ablations import decisions as bench
from analysis.reading.frames import load_sweep
from analysis.signals.sensitivity import lr_sensitivity
from cli.main import main


@pytest.fixture
def small_benchmark(monkeypatch):
    monkeypatch.setattr(bench, "DECISIONS", bench.DECISIONS[:2])
    monkeypatch.setattr(bench, "WIDTHS", (32, 48))
    monkeypatch.setattr(bench, "TOKENS", (3072, 4096))
    monkeypatch.setattr(bench, "LRS", (2.0**-8, 2.0**-6))
    monkeypatch.setattr(bench, "SEEDS", 2)
    monkeypatch.setattr(bench, "BASE", bench.BASE.replace(d_model=32, mup_base_width=32))
    monkeypatch.setattr(bench, "TRAIN", {**bench.TRAIN, "val_seqs": 4, "probe_seqs": 2, "warmup_steps": 1})
    monkeypatch.setattr(bench, "ablation", bench.tuning_ablation())


def cells_of(results, sweep: str) -> list[tuple]:
    """(arm, lr, run_id) of every cell of `sweep`."""
    return db.connect(results).execute(f"SELECT arm, lr, run_id FROM sweep_cells WHERE sweep = '{sweep}'").fetchall()


@pytest.mark.slow
def test_the_benchmark_tunes_carries_and_resumes(small_benchmark, tmp_path, train_data_cfg, capsys):
    results = tmp_path / "results"
    argv = ["decisions", "--run", "--results", str(results), "--data", train_data_cfg.source, "--",
            "--workers", "2", "--no-progress", "--no-report", "--set", f"cache_dir={train_data_cfg.cache_dir}",
            "--set", f"val_tokens={train_data_cfg.val_tokens}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Decision accuracy of 2 decisions in 2 sweeps; the reference is the largest rung, d_model=48" in out
    table, _ = lr_sensitivity(load_sweep(results, bench.SWEEP), "final_val_loss")
    best = dict(zip(table["arm"], table["best_lr"]))
    tuned = {run for *_, run in cells_of(results, bench.SWEEP)}
    for d in bench.DECISIONS:
        written = (results / "decisions" / f"{d.name}.py").read_text()
        assert f"ladder_ablation({d.name!r}, {({arm: best[arm] for arm in d.arms})!r})" in written
        cells = cells_of(results, d.sweep)
        assert {(arm.split("@")[0], lr) for arm, lr, _ in cells} == {(arm, best[arm]) for arm in d.arms}
        smallest = {run for arm, _, run in cells if arm.endswith("@d_model=32")}
        assert len(smallest) == 2 * bench.SEEDS and smallest <= tuned  # adopted, not trained again
    before = {run for (run,) in db.connect(results).execute("SELECT run_id FROM runs").fetchall()}
    assert main(argv) == 0
    after = {run for (run,) in db.connect(results).execute("SELECT run_id FROM runs").fetchall()}
    err = capsys.readouterr().err
    assert before == after and re.search(r"decisions: \d+ cells \(\d+ already finished\)", err)


def test_a_dry_run_writes_nothing(small_benchmark, tmp_path, capsys):
    results = tmp_path / "results"
    assert main(["decisions", "--run", "--results", str(results), "--", "--dry-run"]) == 0
    out = capsys.readouterr()
    assert "the tuning sweep has not finished: the ladders are listed at a placeholder LR" in out.err
    assert out.out.count("cells,") >= 1 + len(bench.DECISIONS) and not (results / "decisions").exists()


@pytest.mark.parametrize("option", ["--results", "--name=x"])
def test_options_the_benchmark_sets_itself_are_refused_after_the_separator(tmp_path, capsys, option):
    assert main(["decisions", "--run", "--results", str(tmp_path), "--", option, "elsewhere"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness decisions: error: {option.split('=')[0]} after `--` is not for the benchmark's "
                          "sweeps")
    assert not any(tmp_path.iterdir())
