"""`harness compare` on simulated tables written with db.RunWriter: its verdicts, fixed-n and anytime-valid, are
those of the vectorized simulations (tests/analysis/simulations.py) on the same planted outcomes, so the rates
measured there (and in docs/benchmarks.md, through this command) are the command's."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))
import simulations  # noqa: E402
from simulated_store import compare_sweep, write_table  # noqa: E402

SWEEPS = 6


@pytest.mark.slow
def test_compare_gives_the_simulations_verdicts_on_tables_with_divergences(tmp_path):
    rng = np.random.default_rng(0)
    arm, baseline = simulations.worst_seed_divergences(rng, SWEEPS, seeds=10, rate=0.3)
    survivors, stable = simulations.survivorship_null(rng, SWEEPS, seeds=10, noise=0.01)
    better = stable - 0.05  # a resolved better row with no divergence, beside the unstable ones
    tables = np.stack([arm, survivors, better], axis=1), np.stack([baseline, stable, stable], axis=1)
    for k in range(SWEEPS):
        # three rows against one baseline each: write each as its own single-LR sweep so the baselines differ
        for row in range(3):
            sweep = f"s{k}r{row}"
            write_table(tmp_path, sweep, tables[0][k, row][None], tables[1][k, row][None])
            found = compare_sweep(tmp_path, sweep)[("arm0", 0.1)]
            assert found["verdict"] == simulations.decide_table(tables[0][k:k + 1, row:row + 1],
                                                                tables[1][k:k + 1, row:row + 1])[0, 0]
            assert found["seq_verdict"] == simulations.decide_sequential(tables[0][k:k + 1, row:row + 1],
                                                                         tables[1][k:k + 1, row:row + 1])[0, 0]


@pytest.mark.slow
def test_compare_holm_corrects_a_nine_row_table_as_the_simulations_do(tmp_path):
    arm, baseline = simulations.null_table(np.random.default_rng(1), 2, seeds=12, shift=-0.03)
    for k in range(2):
        keys = write_table(tmp_path, f"t{k}", arm[k], baseline[k][[0, 1, 2]], lrs=3)
        found = compare_sweep(tmp_path, f"t{k}")
        fixed, sequential = simulations.decide_table(arm[k:k + 1], baseline[k:k + 1]), simulations.decide_sequential(
            arm[k:k + 1], baseline[k:k + 1])
        assert [found[key]["verdict"] for key in keys] == list(fixed[0])
        assert [found[key]["seq_verdict"] for key in keys] == list(sequential[0])
        assert found[keys[0]]["seq_verdict"] in ("better", "undecided")
