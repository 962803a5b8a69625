import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli.main import main

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402

COLUMNS = ("arm,lr,seeds,diverged,mean,ci_low,ci_high,n_pairs,arm_diverged,baseline_diverged,arm_only,baseline_only,"
           "p_stability,p_stability_holm,n,delta,delta_ci_low,delta_ci_high,p,p_holm,survivors_only,verdict,decided_by,"
           "seeds_needed")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Sweep 'qk' written with db.RunWriter alone (no plan, no Ablation): a real effect and a null one."""
    path = tmp_path_factory.mktemp("compare") / "results"
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.002, 4), "rmsnorm": (-0.1, 0.002, 4), "same": (0.0, 0.04, 4)},
                            steps=12)
    return path


def test_table_has_one_row_per_arm_with_verdicts(results, capsys):
    assert main(["compare", "qk", "--results", str(results), "--baseline", "base"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == COLUMNS.split(",")
    verdicts = {line.split()[0]: line for line in lines[2:]}
    assert verdicts["base"].rstrip().endswith("baseline")
    assert "better" in verdicts["rmsnorm"] and "within noise" in verdicts["same"]


def test_the_code_that_made_the_runs_is_one_note_and_a_mix_of_versions_says_which(tmp_path, capsys):
    code = {"harness_version": "0.1.0", "git_commit": "6eaecc0bad5c62b25689559f679d6e51b74d8242", "git_dirty": False,
            "torch_version": "2.13.0", "device_name": "cpu"}
    synthetic.write_planted(tmp_path, "qk", {"base": (0.0, 0.002, 3), "rmsnorm": (-0.1, 0.002, 3)}, steps=12,
                            provenance=code)
    assert main(["compare", "qk", "--results", str(tmp_path)]) == 0
    assert capsys.readouterr().err == "harness compare: code: harness 0.1.0 @ 6eaecc0 (clean), torch 2.13.0, cpu\n"
    fixed = {**code, "git_commit": "1a2b3c4" + "0" * 33, "git_dirty": True}
    for seed in range(2):
        synthetic.write_run(tmp_path, f"fixed-{seed}", sweep="qk", arm="fixed", seed=seed, lr=None, final=2.9, steps=12,
                            provenance=fixed)
    assert main(["compare", "qk", "--results", str(tmp_path), "--format", "json"]) == 0
    assert capsys.readouterr().err == ("harness compare: code: the 8 runs mix code versions: 6 by harness 0.1.0 @ "
                                       "6eaecc0 (clean), 2 by harness 0.1.0 @ 1a2b3c4 (dirty); torch 2.13.0, cpu\n")


def test_csv_and_json_carry_the_same_rows(results, capsys):
    main(["compare", "qk", "--results", str(results), "--baseline", "base", "--format", "csv"])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == COLUMNS and len(out.splitlines()) == 4
    base, rmsnorm, _ = csv.DictReader(io.StringIO(out))
    assert ((base["arm"], base["lr"], base["seeds"], base["diverged"], base["verdict"])
            == ("base", "", "4", "0", "baseline"))
    assert all(base[c] == "" for c in COLUMNS.split(",")[7:] if c != "verdict")  # nothing paired: empty, like no lr
    assert ((rmsnorm["n_pairs"], rmsnorm["arm_diverged"], rmsnorm["n"], rmsnorm["survivors_only"])
            == ("4", "0", "4", "False"))
    main(["compare", "qk", "--results", str(results), "--baseline", "base", "--format", "json", "--min-effect", "0.2"])
    rows = json.loads(capsys.readouterr().out)
    assert [row["arm"] for row in rows] == ["base", "rmsnorm", "same"]
    assert rows[0]["delta"] is None and rows[1]["verdict"] == "negligible"  # -0.1 lies inside ±0.2
    assert rows[1]["survivors_only"] is False and rows[1]["p_stability"] is None  # no divergence: nothing to test


@pytest.mark.parametrize("args, message", [
    (["compare", "kq"], "harness compare: error: no sweep named 'kq' in the results store; did you mean 'qk'?"),
    (["compare", "qk", "--baseline", "rms"],
     "harness compare: error: baseline 'rms' is not an arm of sweep 'qk'; did you mean 'rmsnorm'?"),
    (["compare", "qk", "--metric", "final_val_los"],
     "harness compare: error: metric 'final_val_los' is not a numeric column of the runs view; did you mean "
     "'final_val_loss'?"),
])
def test_bad_input_is_one_line_and_exit_2(results, capsys, args, message):
    assert main([*args, "--results", str(results)]) == 2
    assert capsys.readouterr().err.strip() == message


def test_running_sweep_is_labelled_partial_on_stderr(tmp_path, capsys):
    synthetic.write_run(tmp_path, "a0", sweep="live", arm="a", seed=0, lr=None, final=3.0, steps=12)
    synthetic.write_run(tmp_path, "a1", sweep="live", arm="a", seed=1, lr=None, final=3.0, steps=12, status=None)
    assert main(["compare", "live", "--results", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip() == "harness compare: sweep 'live' is still running: 1 of 2 cells; partial"
    assert "baseline" in captured.out


def test_a_sweep_with_no_finished_runs_exits_2(tmp_path, capsys):
    synthetic.write_run(tmp_path, "a0", sweep="live", arm="a", seed=0, lr=None, final=3.0, steps=12, status=None)
    assert main(["compare", "live", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == ("harness compare: error: sweep 'live' has no finished runs yet (0 of 1 "
                                               "cells; partial).")


@pytest.mark.slow
def test_the_command_imports_no_plotting_and_no_torch(results):
    code = (
        "import sys; from cli.main import main; main(['compare', 'qk', '--results', sys.argv[1]]); "
        "print(sorted(m for m in ('torch', 'matplotlib', 'seaborn') if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(results)], capture_output=True, text=True, check=True)
    assert result.stderr.strip() == "[]"


@pytest.mark.slow
def test_the_store_is_read_in_a_child_and_scipy_imported_only_here(results):
    # The latency design of `harness compare` (cli/forked.py): this process never imports DuckDB,
    # and the reader in the child never imports scipy.
    here = ("from cli.main import main; import sys; "
            f"main(['compare', 'qk', '--results', {str(results)!r}, '--baseline', 'base']); "
            "print(sorted(m for m in ('duckdb', 'pyarrow', 'scipy.stats') if m in sys.modules), file=sys.stderr)")
    child = ("from cli.compare import read_cells; import sys; "
             f"read_cells({str(results)!r}, 'qk', 'final_val_loss', 'base'); "
             "print(sorted(m for m in ('duckdb', 'scipy', 'pandas') if m in sys.modules), file=sys.stderr)")
    loaded = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stderr.strip().splitlines()[-1]
              for code in (here, child)]
    assert loaded == ["['scipy.stats']", "['duckdb']"]


@pytest.fixture(scope="module")
def widths(tmp_path_factory):
    """Sweep 'grow' written with db.RunWriter alone: qk_norm none/rmsnorm at d_model 128 and 256, 4 seeds at two LRs;
    rmsnorm 0.1 better at 128 and 0.1 worse at 256 (run noise 0.003)."""
    path = tmp_path_factory.mktemp("across") / "results"
    planted = {("none", 128): 3.0, ("rmsnorm", 128): 2.9, ("none", 256): 2.6, ("rmsnorm", 256): 2.7}
    noise = iter(np.random.default_rng(0).normal(0, 0.003, 32))
    for (qk_norm, width), final in planted.items():
        for lr, penalty in ((1e-3, 0.0), (3e-3, 0.05)):
            for seed in range(4):
                synthetic.write_run(path, f"{qk_norm}-{width}-{lr}-{seed}", sweep="grow", arm=f"{qk_norm}-{width}",
                                    seed=seed, lr=lr, final=final + penalty + next(noise), steps=12,
                                    config={"d_model": width, "qk_norm": qk_norm})
    return path


def test_across_prints_each_variant_per_scale_with_a_reversal_column(widths, capsys):
    assert main(["compare", "grow", "--results", str(widths), "--across", "d_model", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert list(rows[0]) == ["d_model", "variant", "best_lr", "n", "diverged", "loss", "ci_low", "ci_high", "rank",
                             "reversal"]
    assert [(r["d_model"], r["variant"], r["rank"], r["best_lr"], r["n"]) for r in rows] == [
        (128, "qk_norm=rmsnorm", 1, 1e-3, 4), (128, "qk_norm=none", 2, 1e-3, 4),
        (256, "qk_norm=none", 1, 1e-3, 4), (256, "qk_norm=rmsnorm", 2, 1e-3, 4)]
    assert rows[0]["reversal"].startswith("beats qk_norm=none here, loses to it at d_model=256 (Holm-adjusted p ")
    main(["compare", "grow", "--results", str(widths), "--across", "d_model"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:2] == ["d_model", "variant"] and lines[0].rstrip().endswith("reversal") and len(lines) == 6


def test_across_a_field_whose_order_holds_says_no_resolved_reversal(widths, capsys):
    assert main(["compare", "grow", "--results", str(widths), "--across", "qk_norm", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {row["reversal"] for row in rows} == {"no resolved reversal"}  # two variants (the widths): 128 loses at both
    assert {row["variant"] for row in rows} == {"d_model=128", "d_model=256"}


@pytest.mark.parametrize("args, message", [
    (["--across", "d_modle"],
     "harness compare: error: --across 'd_modle' is not a config field of sweep 'grow''s runs; "
     "did you mean 'd_model'?"),
    (["--across", "n_layers"],
     "harness compare: error: --across 'n_layers' takes one value (2) among sweep 'grow''s finished runs: "
                               "nothing to compare across; it needs two or more."),
    (["--across", "d_model", "--metric", "final_val_los"],
     "harness compare: error: metric 'final_val_los' is not a numeric column of the runs view; did you mean "
     "'final_val_loss'?"),
])
def test_across_bad_input_is_one_line_and_exit_2(widths, capsys, args, message):
    assert main(["compare", "grow", "--results", str(widths), *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == message and captured.out == ""


@pytest.fixture(scope="module")
def ladder(tmp_path_factory):
    """Sweep 'lad' written with db.RunWriter: two arms at 4 rungs × 3 seeds from known curves
    (tests/analysis/ladder_simulation.py)."""
    import ladder_simulation
    import ladder_synthetic

    path = tmp_path_factory.mktemp("ladder") / "results"
    ladder_synthetic.write_ladder(path, "lad", ladder_simulation.CURVES, ladder_synthetic.chinchilla_rungs(4), seeds=3)
    return path


@pytest.mark.slow
def test_ladder_json_gives_the_target_each_arms_extrapolation_and_each_rungs_consistency(ladder, capsys):
    assert main(["compare", "lad", "--results", str(ladder), "--ladder", "--target-flops", "1e17", "--format",
                 "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["target"] == {"axis": "compute", "value": 1e17, "given": True}
    base, steeper = out["arms"]
    assert (base["arm"], steeper["arm"], base["rungs"], base["seeds"]) == ("base", "steeper", 4, 12)
    assert base["gap"] is None and steeper["low"] < steeper["predicted"] < steeper["high"]
    assert steeper["gap"] == pytest.approx(steeper["predicted"] - base["predicted"])
    assert [row["rung"] for row in out["consistency"]] == ["d_model=64,n_layers=2", "d_model=128,n_layers=3",
                                                           "d_model=256,n_layers=4"]


@pytest.mark.slow
def test_ladder_table_and_csv(ladder, capsys):
    assert main(["compare", "lad", "--results", str(ladder), "--ladder", "--target-params", "1e8", "--baseline",
                 "steeper"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("Ladder: 2 arms at 4 rungs (d_model=64,n_layers=2 … d_model=512,n_layers=5); baseline steeper; "
                        "fits of params extrapolated to 1e+08 parameters.")
    assert (lines[1].split()[:7] == ["arm", "rungs", "seeds", "diverged", "best_lrs", "E", "alpha"]
            and lines[3].startswith("steeper "))
    assert lines[6].startswith("Decision consistency: of the 1 pair of arms whose order the largest rung resolves")
    main(["compare", "lad", "--results", str(ladder), "--ladder", "--format", "csv"])
    arms, consistency = capsys.readouterr().out.strip().split("\n\n")
    assert [row["arm"] for row in csv.DictReader(io.StringIO(arms))] == ["base", "steeper"]
    assert len(list(csv.DictReader(io.StringIO(consistency)))) == 3


@pytest.mark.parametrize("args, message", [
    (["--target-flops", "1e17"], "--target-flops needs --ladder (it is where the ladder's fits are extrapolated to)."),
    (["--ladder", "--target-flops", "-5"], "--target-flops -5 is invalid: it must be a positive number."),
    (["--ladder", "--across", "d_model"], "--ladder and --across: give one."),
    (["--ladder", "--target-flops", "1e13"],
     "--target-flops 1e+13 is not beyond the largest rung (3.07e+14 FLOPs): extrapolation "
                                             "predicts past the ladder; give a target above 3.07e+14."),
    (["--ladder", "--baseline", "bse"], "baseline 'bse' is not an arm of ladder 'lad'; did you mean 'base'?"),
])
def test_ladder_bad_input_is_one_line_and_exit_2(ladder, capsys, args, message):
    assert main(["compare", "lad", "--results", str(ladder), *args]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"harness compare: error: {message}" and captured.out == ""


def test_ladder_on_a_sweep_that_is_no_ladder_is_one_line(results, capsys):
    assert main(["compare", "qk", "--results", str(results), "--ladder"]) == 2
    assert capsys.readouterr().err.strip() == ("harness compare: error: sweep 'qk' is not a ladder: no arm has "
                                               "finished runs at two sizes (d_model and n_layers); declare one with "
                                               "Ablation(ladder=ladder(...)) (docs/sweeps.md).")


@pytest.mark.slow
def test_plain_compare_still_imports_no_fitting_code(ladder):
    code = ("import sys; from cli.main import main; main(['compare', 'lad', '--results', sys.argv[1]]); "
            "print(sorted(m for m in sys.modules if m.startswith('analysis.ladder.') or m == 'pandas'), "
            "file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", code, str(ladder)], capture_output=True, text=True, check=True)
    assert result.stderr.strip().splitlines()[-1] == "[]"
