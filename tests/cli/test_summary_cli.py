import csv
import io
import json
import sys
from pathlib import Path

import pytest

from cli.main import main

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402

L0 = 8.0  # every run's loss at step 0 (the metric initial_loss); training losses are logged every 3rd step only
COLUMNS = ["arm", "lrs", "best_lr", "best_loss", "lr_sensitivity", "initial_loss", "initial_loss_from", "runs",
           "diverged", "divergence_rate", "median_diverged_step", "loss_spikes", "spike_score", "peak_attn_logit",
           "peak_layer", "logit_growth", "log_z_growth", "verdict", "decided_by"]
# arm → lr → per-seed final val loss, None = diverged at step 6
GRID = {"base": {1e-3: [3.0, 3.02], 1e-2: [None, 3.1]}, "qk": {1e-3: [2.95, 2.97], 1e-2: [2.9, 2.92]}}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Sweep 'sum' written with db.RunWriter alone. Each run has one loss spike (step 4); qk's runs close with a
    summary whose loss_spike_score is 2.5, base's with none (then: spikes over the last step)."""
    path = tmp_path_factory.mktemp("summary") / "results"
    for arm, by_lr in GRID.items():
        for lr, finals in by_lr.items():
            for seed, final in enumerate(finals):
                synthetic.write_run(path, f"{arm}-{lr}-{seed}", sweep="sum", arm=arm, seed=seed, lr=lr, steps=12,
                                    log_every=3, final=3.0 if final is None else final,
                                    diverge_at=6 if final is None else None, initial_loss=L0, spikes=(4,),
                                    logit_growth=4.0, summary={"loss_spike_score": 2.5} if arm == "qk" else None)
    return path


def test_summary_is_one_row_per_arm_with_the_reports_columns(results, capsys):
    assert main(["summary", "sum", "--results", str(results), "--format", "json"]) == 0
    rows = {row["arm"]: row for row in json.loads(capsys.readouterr().out)}
    assert list(rows["base"]) == COLUMNS
    base, qk = rows["base"], rows["qk"]
    # ℓ(η) by hand: base 3.01 at 1e-3, (ℓ₀ + 3.1) / 2 at 1e-2 (the divergence counts as ℓ₀); qk 2.96 and 2.91
    assert (base["best_lr"], qk["best_lr"]) == (1e-3, 1e-2)
    assert base["best_loss"] == pytest.approx(3.01) and qk["best_loss"] == pytest.approx(2.91)
    assert base["lr_sensitivity"] == pytest.approx((0 + (L0 + 3.1) / 2 - 3.01) / 2)
    assert qk["lr_sensitivity"] == pytest.approx((2.96 - 2.91) / 2)
    assert (base["initial_loss"], base["initial_loss_from"]) == (L0, "step 0")
    assert (base["runs"], base["diverged"], base["divergence_rate"], base["median_diverged_step"]) == (4, 1, 0.25, 6)
    assert (qk["diverged"], qk["divergence_rate"], qk["median_diverged_step"]) == (0, 0.0, None)
    assert base["spike_score"] == pytest.approx((3 * 100 / 11 + 100 / 6) / 4)  # one spike over each run's trained steps
    assert qk["spike_score"] == 2.5  # the run summaries' own score
    # synthetic attention logits: 5·growth·(1 + layer) + head, growing ×4 over a run: the peak is layer 1, head 1
    assert (base["peak_attn_logit"], base["peak_layer"]) == (pytest.approx(5 * 4 * 2 + 1), 1)
    assert qk["logit_growth"] == pytest.approx(4.0)
    # the headline's rule: qk at 1e-2 against base at 1e-3, differences −0.1 and −0.1: zero spread from two pairs
    assert (base["verdict"], qk["verdict"], qk["decided_by"]) == ("baseline", "no CI", None)


def test_table_and_csv_carry_the_same_rows(results, capsys):
    assert main(["summary", "sum", "--results", str(results)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == COLUMNS and [line.split()[0] for line in lines[2:]] == ["base", "qk"]
    assert main(["summary", "sum", "--results", str(results), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [row["arm"] for row in rows] == ["base", "qk"] and rows[1]["median_diverged_step"] == ""


@pytest.mark.parametrize("args, message", [
    (["summary", "smu"], "harness summary: error: no sweep named 'smu' in the results store; did you mean 'sum'?"),
    (["summary", "sum", "--metric", "final_val_los"],
     "harness summary: error: metric 'final_val_los' is not a numeric column of the runs view; did you mean "
     "'final_val_loss'?"),
])
def test_bad_input_is_one_line_and_exit_2(results, capsys, args, message):
    assert main([*args, "--results", str(results)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == message and captured.out == ""


def test_a_sweep_with_no_finished_runs_exits_2_and_a_running_one_says_partial(tmp_path, capsys):
    synthetic.write_run(tmp_path, "a0", sweep="live", arm="a", seed=0, lr=1e-3, final=3.0, steps=12, status=None)
    assert main(["summary", "live", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == ("harness summary: error: sweep 'live' has no finished runs yet (0 of 1 "
                                               "cells; partial).")
    synthetic.write_run(tmp_path, "a1", sweep="live", arm="a", seed=1, lr=1e-3, final=3.0, steps=12)
    assert main(["summary", "live", "--results", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip() == "harness summary: sweep 'live' is still running: 1 of 2 cells; partial"
    assert captured.out.splitlines()[2].split()[0] == "a"
