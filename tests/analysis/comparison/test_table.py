import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

import synthetic
from analysis.comparison import stats
from analysis.comparison.sweep import compare
from analysis.comparison.table import COLUMNS, DIRECTION, OBSERVED
from analysis.errors import AnalysisError
from analysis.reading.frames import load_sweep
from analysis.summary import comparison_frame
from oracles import holm_by_definition


@pytest.fixture(scope="module")
def table(planted_store):
    return comparison_frame(compare(load_sweep(planted_store[0], "planted"))).set_index("arm")


def test_columns_are_exactly_the_documented_ones(table):
    # the last two: not printed by harness compare
    assert list(table.reset_index().columns) == [*COLUMNS, OBSERVED, DIRECTION]


def test_planted_effects_get_their_verdicts(table):
    assert table.at["better", "verdict"] == "better" and table.at["better", "delta"] < 0
    assert table.at["worse", "verdict"] == "worse" and table.at["worse", "delta"] > 0
    assert table.at["null", "verdict"] == "within noise"
    assert table.at["tiny", "verdict"] == "negligible"
    assert table.at["single", "verdict"] == "no CI"
    assert pd.isna(table.at["single", "ci_low"]) and pd.isna(table.at["single", "delta_ci_low"])
    assert table.at["better", "delta"] == pytest.approx(-0.10, abs=0.01)


def test_baseline_row_has_empty_deltas(table):
    row = table.loc["baseline"]
    assert row["verdict"] == "baseline"
    assert row[["delta", "delta_ci_low", "delta_ci_high", "p", "p_holm"]].isna().all() and pd.isna(row["seeds_needed"])


def test_diverged_runs_are_counted_and_left_out_of_means(planted_store, table):
    _, finals = planted_store
    kept = [finals[("unstable", 1e-3, seed)] for seed in range(6) if ("unstable", 1e-3, seed) not in synthetic.DIVERGED]
    row = table.loc["unstable"]
    assert row["diverged"] == 2 and row["seeds"] == 4 and row["mean"] == pytest.approx(np.mean(kept))
    assert (row["n_pairs"], row["arm_diverged"], row["baseline_diverged"], row["n"]) == (6, 2, 0, 4)
    assert row["survivors_only"] and not table.loc["better", "survivors_only"]
    assert row["p_stability"] == pytest.approx(scipy_stats.fisher_exact([[2, 4], [0, 6]]).pvalue)
    base = [finals[("baseline", 1e-3, seed)] for seed in range(6) if ("unstable", 1e-3, seed) not in synthetic.DIVERGED]
    assert row["delta"] == pytest.approx(np.mean(np.subtract(kept, base)))
    assert row["verdict"] == "worse"  # worse on its survivors, and it diverged more: no selection in its favour


def test_n_is_the_pairs_behind_the_test(table):
    assert table.at["single", "n"] == 1 and table.at["single", "n_pairs"] == 1 and table.at["null", "n"] == 6
    assert (table.at["single", "seeds"] == 1 and table.at["baseline", "seeds"] == 6
            and pd.isna(table.at["baseline", "n"]))


def test_means_and_holm_match_the_planted_values(planted_store, table):
    _, finals = planted_store
    assert table.at["worse", "mean"] == pytest.approx(np.mean([finals[("worse", 1e-3, s)] for s in range(6)]))
    arms = [arm for arm in table.index if arm != "baseline"]
    family = [*table.loc[arms, "p"], *table.loc[arms, "p_stability"]]  # every test of the table: one Holm family
    expected = holm_by_definition(family)
    assert table.loc[arms, "p_holm"].to_numpy() == pytest.approx(expected[:len(arms)], nan_ok=True)
    assert table.loc[arms, "p_stability_holm"].to_numpy() == pytest.approx(expected[len(arms):], nan_ok=True)
    assert table.loc[arms, "p_stability"].notna().sum() == 1  # only `unstable` diverged on a seed its baseline did not


def test_seeds_needed_comes_from_the_paired_spread(planted_store, table):
    _, finals = planted_store
    diffs = [finals[("null", 1e-3, s)] - finals[("baseline", 1e-3, s)] for s in range(6)]
    assert table.at["null", "seeds_needed"] == stats.seeds_needed(np.std(diffs, ddof=1), 6, 0.01)
    assert table.at["null", "seeds_needed"] > table.at["better", "seeds_needed"]


def test_each_lr_is_compared_with_the_baseline_at_that_lr(tmp_path):
    arms = {"baseline": (0.0, 0.002, 3), "qk": (-0.05, 0.002, 3)}
    synthetic.write_planted(tmp_path, "lrs", arms, lrs=(1e-3, 1e-2), lr_penalty=lambda lr: 0.5 if lr > 5e-3 else 0.0,
                            steps=12)
    table = comparison_frame(compare(load_sweep(tmp_path, "lrs"), min_effect=0.02))
    assert list(zip(table["arm"], table["lr"])) == [("baseline", 1e-3), ("baseline", 1e-2), ("qk", 1e-3), ("qk", 1e-2)]
    assert table.loc[table["arm"] == "qk", "delta"].to_numpy() == pytest.approx([-0.05, -0.05], abs=0.01)


def test_bad_requests_say_what_would_work(planted_store):
    sweep = load_sweep(planted_store[0], "planted")
    with pytest.raises(AnalysisError,
                       match="baseline 'basline' is not an arm of sweep 'planted'; did you mean 'baseline'"):
        compare(sweep, baseline="basline")
    with pytest.raises(AnalysisError, match="did you mean 'final_val_loss'"):
        compare(sweep, metric="final_val")
    with pytest.raises(AnalysisError, match="min_effect"):
        compare(sweep, min_effect=0)


def test_a_sweep_with_no_finished_runs_is_refused(tmp_path):
    synthetic.write_run(tmp_path, "r0", sweep="fresh", arm="a", seed=0, lr=1e-3, final=3.0, steps=5, status=None)
    with pytest.raises(AnalysisError, match=r"sweep 'fresh' has no finished runs yet \(0 of 1 cells; partial\)"):
        compare(load_sweep(tmp_path, "fresh"))


def test_a_searched_arm_enters_with_its_best_trial_per_seed(tmp_path):
    import db

    cells = []
    for seed in range(3):
        synthetic.write_run(tmp_path, f"base-{seed}", sweep="search", arm="base", seed=seed, lr=1e-3,
                            final=3.0 + 0.01 * seed, steps=12)
        cells.append({"arm": "base", "lr": 1e-3, "seed": seed, "run_id": f"base-{seed}"})
    db.write_sweep(tmp_path, "search", {"question": "?", "baseline": "base"}, cells)
    for seed in range(3):
        for trial, final in enumerate((3.5, 2.9 + 0.01 * seed, 3.2)):  # the middle trial is each seed's best
            lr = 1e-3 * (trial + 1)
            run_id = f"tuned-{seed}-{trial}"
            synthetic.write_run(tmp_path, run_id, sweep="search", arm="tuned", seed=seed, lr=lr, final=final, steps=12)
            db.write_trial(tmp_path, "search", seed,
                           {"arm": "tuned", "lr": lr, "seed": seed, "trial": trial, "run_id": run_id,
                                                      "arm_values": '{"lr": %r}' % lr})
    table = comparison_frame(compare(load_sweep(tmp_path, "search"))).set_index("arm")
    tuned = table.loc["tuned"]
    assert pd.isna(tuned["lr"]) and tuned["seeds"] == 3  # the LR was tuned: one row, each seed's best trial
    assert tuned["mean"] == pytest.approx(2.91)
