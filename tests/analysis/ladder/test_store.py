"""A ladder read back from the store it was written to through the real `db.RunWriter` (`ladder_store`,
tests/analysis/conftest.py): the planted losses at each rung's best LR, the runs' compute, diverged runs counted
and left out; then extrapolated to recover the planted truth, and the inputs that cannot be analysed refused with
one line."""

import re

import numpy as np
import pytest

import ladder_simulation as simulation
import ladder_synthetic as synthetic
from analysis.errors import AnalysisError
from analysis.ladder.analyse import analyse_ladder
from analysis.ladder.points import is_ladder, ladder_data
from analysis.reading.frames import load_sweep

pytestmark = pytest.mark.slow  # waits on processes or builds a shared store first

RUNGS = synthetic.chinchilla_rungs(4)  # the fixture's


def test_the_points_are_the_planted_losses_at_each_rungs_best_lr(ladder_store):
    results, planted = ladder_store
    data = ladder_data(load_sweep(results, "lad"), "final_val_loss", "base@" + RUNGS[-1].label)
    assert data.variants == ["base", "steeper"] and data.rungs == [rung.label for rung in RUNGS]
    expected = planted.copy()
    expected[1, 0, 2] = np.nan  # the diverged run: counted, not fitted
    assert np.allclose(data.loss, expected, equal_nan=True, rtol=0, atol=1e-12)
    assert data.diverged.tolist() == [[0, 0, 0, 0], [1, 0, 0, 0]]
    assert np.all(data.lr == 1e-3)
    assert np.allclose(data.compute, [[rung.flops_per_token * rung.tokens for rung in RUNGS]] * 2)
    assert np.allclose(data.params, [[rung.params for rung in RUNGS]] * 2)


def test_the_extrapolation_covers_the_planted_loss_gap_and_crossover(ladder_store):
    results, _ = ladder_store
    ladder = analyse_ladder(load_sweep(results, "lad"), "final_val_loss", "base@" + RUNGS[-1].label, target_flops=1e17,
                            axes=())
    truth = [synthetic.planted_loss(curve, 1e17) for curve in simulation.CURVES.values()]
    base, steeper = ladder.table.to_dict("records")
    assert base["low"] <= truth[0] <= base["high"] and steeper["low"] <= truth[1] <= steeper["high"]
    assert steeper["gap_low"] <= truth[1] - truth[0] <= steeper["gap_high"]
    assert steeper["cross_low"] <= simulation.crossover_truth(*simulation.CURVES.values()) <= steeper["cross_high"]
    assert (base["seeds"], steeper["seeds"], steeper["diverged"]) == (12, 11, 1)
    assert base["best_lrs"] == "0.001 0.001 0.001 0.001"  # the second LR was planted 0.05 worse
    assert ladder.target.given and ladder.target.value == 1e17


def test_the_sql_behind_the_points_runs_in_db_query(ladder_store):
    from cli.main import main

    results, _ = ladder_store
    for sql in ladder_data(load_sweep(results, "lad"), "final_val_loss", "base").sql:
        assert main(["db", "query", sql, "--results", str(results), "--format", "csv"]) == 0, sql


def test_a_two_rung_ladder_refuses_a_three_parameter_fit(tmp_path):
    synthetic.write_ladder(tmp_path, "two", simulation.CURVES, RUNGS[:2], seeds=2)
    ladder = analyse_ladder(load_sweep(tmp_path, "two"), "final_val_loss", "base")
    assert ladder.fit.curves == [None, None]
    assert set(ladder.table["note"]) == {"not fitted: 2 rungs for 3 parameters (E, A, α): a curve needs at least 3 "
                                         "rungs"}
    assert ladder.table[["E", "predicted", "gap", "crossover"]].isna().all().all()
    assert len(ladder.consistency) == 1  # decision consistency needs no fit


def test_a_target_inside_the_ladder_and_a_sweep_that_is_no_ladder_are_refused(ladder_store, planted_store):
    results, _ = ladder_store
    sweep = load_sweep(results, "lad")
    top = RUNGS[-1].compute
    with pytest.raises(AnalysisError,
                       match="^" + re.escape(f"--target-flops 1e+14 is not beyond the largest rung ({top:.3g} FLOPs): "
                                                              "extrapolation predicts past the ladder; give a target "
                                                              f"above {top:.3g}.")):
        analyse_ladder(sweep, "final_val_loss", "base", target_flops=1e14)
    with pytest.raises(AnalysisError, match=r"^--target-params 1000 is not beyond the largest rung"):
        analyse_ladder(sweep, "final_val_loss", "base", target_params=1e3)
    flat = load_sweep(planted_store[0], "planted")
    assert is_ladder(sweep) and not is_ladder(flat)
    with pytest.raises(AnalysisError, match="sweep 'planted' is not a ladder: no arm has finished runs at two sizes"):
        analyse_ladder(flat, "final_val_loss", "baseline")
