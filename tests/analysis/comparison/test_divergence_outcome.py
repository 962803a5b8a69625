"""Divergence is an outcome: sweeps written with db.RunWriter where arms diverge, through the whole analysis."""

import math

import pytest
from scipy import stats as scipy_stats

import db
import synthetic
from analysis.comparison.sweep import compare
from analysis.reading.frames import load_sweep
from analysis.signals.sensitivity import lr_curve
from analysis.signals.stability import stability
from analysis.summary import comparison_frame


def _write(results, sweep, arms):
    """arms: {arm: [per-seed final, or None for a divergence, or nan for a completed run with a NaN val loss]}."""
    for index, (arm, finals) in enumerate(arms.items()):
        for seed, final in enumerate(finals):
            nonfinite = final is not None and math.isnan(final)
            synthetic.write_run(results, f"{sweep}-{index}-{seed}", sweep=sweep, arm=arm, seed=seed, lr=1e-3, steps=12,
                                final=3.0 + 0.01 * seed if final is None or nonfinite else final,
                                diverge_at=6 if final is None else None, last_val=math.nan if nonfinite else None)
    return load_sweep(results, sweep)


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    base = [3.0 + 0.01 * s for s in range(6)]
    arms = {
        "base": base,
        "gone4": [b - 0.1 for b in base[:2]] + [None] * 4,  # its two survivors 0.1 better, by exactly the same amount
        "gone4_noisy": [base[0] - 0.1, base[1] - 0.1003] + [None] * 4,
    }
    sweep = _write(tmp_path_factory.mktemp("gone") / "results", "gone", arms)
    return comparison_frame(compare(sweep, baseline="base")).set_index("arm")


def test_an_arm_that_diverged_on_4_of_6_is_neither_negligible_nor_better(table):
    for arm in ("gone4", "gone4_noisy"):
        row = table.loc[arm]
        assert (row["n_pairs"], row["arm_diverged"], row["baseline_diverged"], row["n"]) == (6, 4, 0, 2)
        assert row["survivors_only"] and row["verdict"] not in ("negligible", "better")
        assert row["p_stability"] == pytest.approx(scipy_stats.fisher_exact([[4, 2], [0, 6]]).pvalue)
    assert table.at["gone4", "verdict"] == "no CI"  # zero spread from two pairs


def test_a_stable_arm_against_a_baseline_that_diverged_on_5_of_6_is_more_stable(tmp_path):
    sweep = _write(tmp_path, "fixed", {"base": [3.0] + [None] * 5, "qk_norm": [2.9 + 0.01 * s for s in range(6)]})
    row = comparison_frame(compare(sweep, baseline="base")).set_index("arm").loc["qk_norm"]
    oracle = scipy_stats.fisher_exact([[0, 6], [5, 1]]).pvalue  # one arm: one divergence test, one (empty) loss test
    assert oracle < 0.05 and row["p_stability_holm"] == pytest.approx(oracle)
    assert (row["baseline_diverged"], row["arm_diverged"], row["n"]) == (5, 0, 1) and row["verdict"] == "more stable"


def test_a_completed_run_with_a_nonfinite_metric_is_a_divergence_everywhere(tmp_path):
    sweep = _write(tmp_path, "nan", {"base": [3.0, 3.01, 3.02], "broken": [2.9, math.nan, 2.92]})
    row = comparison_frame(compare(sweep, baseline="base")).set_index("arm").loc["broken"]
    assert (row["diverged"], row["seeds"], row["arm_diverged"], row["n"]) == (1, 2, 1, 2)
    curve, _ = lr_curve(sweep, "final_val_loss")
    broken = curve.set_index("arm").loc["broken"]
    assert broken["diverged"] == 1 and broken["loss"] == pytest.approx((2.9 + 2.92 + broken["initial_loss"]) / 3)
    stable, _ = stability(sweep, "final_val_loss")
    assert stable.set_index("arm").at["broken", "divergence_rate"] == pytest.approx(1 / 3)


def test_a_completed_run_without_the_metric_is_left_out_everywhere(tmp_path):
    sweep = "missing"
    for seed in range(2):
        synthetic.write_run(tmp_path, f"b{seed}", sweep=sweep, arm="base", seed=seed, lr=1e-3, final=3.0 + 0.01 * seed,
                            steps=12)
    writer = db.RunWriter.open(tmp_path, "noval", sweep=sweep, arm="base", seed=2, config={"lr": 1e-3})
    writer.log_metrics(1, {"train_loss": 3.5})  # no val_loss: final_val_loss is NULL, not a failure
    writer.close("completed")
    data = load_sweep(tmp_path, sweep)
    row = comparison_frame(compare(data)).set_index("arm").loc["base"]
    assert (row["seeds"], row["diverged"]) == (2, 0)
    curve, _ = lr_curve(data, "final_val_loss")
    assert curve["n"].tolist() == [2] and curve["diverged"].tolist() == [0]
    stable, _ = stability(data, "final_val_loss")
    assert stable["runs"].tolist() == [2]
