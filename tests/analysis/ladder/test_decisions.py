"""`harness decisions` on planted decision ladders written through the real `db.RunWriter`: decisions that flip
at a planted rung are found there, a decision the reference does not resolve is counted apart, a divergence is an
outcome, and each rung's accuracy and its interval match the planted truth (the oracle: the signs of the planted
differences). The interval's coverage over many replays is tests/analysis/decisions_simulation.py's, asserted
here on a short run."""

import json

import numpy as np
import pytest

import decisions_simulation as simulation
import decisions_synthetic as planted
import ladder_synthetic as synthetic
from analysis.ladder.decision_runs import decision_runs
from analysis.ladder.decisions import decision_accuracy
from cli.main import main

RUNGS = synthetic.chinchilla_rungs(4)
LABELS = [rung.label for rung in RUNGS]
# sweep → (the second variant's planted loss minus the first's at each rung, run noise)
DECIDED = {
    "steady": ([-0.05] * 4, 0.005),  # the second wins at every rung
    "flip1": ([0.05, -0.05, -0.05, -0.05], 0.005),  # the order the reference decides appears at rung 1
    "flip2": ([0.05, 0.05, -0.05, -0.05], 0.005),
    "late": ([0.05, 0.05, 0.05, -0.05], 0.005),  # only the reference itself decides this way
}
APART = {"negligible": ([0.05, 0.05, 0.05, 0.0], 0.0005), "unresolved": ([0.05, 0.05, 0.05, 0.0], 0.05)}
SWEEPS = [*DECIDED, *APART, "unstable", "deep"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Every planted decision in one store: DECIDED and APART; 'unstable', whose second variant diverges on all 6
    seeds at the reference and is worse below it; 'deep', steady, whose second variant has twice the layers."""
    results = tmp_path_factory.mktemp("decisions") / "results"
    for k, (sweep, (gaps, noise)) in enumerate({**DECIDED, **APART}.items()):
        planted.write_decision(results, sweep, gaps, RUNGS, noise=noise, rng_seed=k)
    planted.write_decision(results, "unstable", [0.05] * 4, RUNGS, seeds=6, noise=0.005,
                           diverged={(1, 3, seed) for seed in range(6)})
    planted.write_decision(results, "deep", [-0.05] * 4, RUNGS, noise=0.005, deeper=True)
    return results


@pytest.fixture(scope="module")
def result(store):
    return decision_accuracy(decision_runs(store, SWEEPS, "final_val_loss"), target=0.75)


@pytest.mark.slow
def test_each_decision_settles_and_flips_where_it_was_planted(result):
    decisions = result.decisions.set_index("sweep")
    settles = {"steady": 0, "flip1": 1, "flip2": 2, "late": 3, "unstable": 0, "deep": 0}
    for sweep, rung in settles.items():
        assert decisions.loc[sweep, "settles_at"] == LABELS[rung], sweep
        assert decisions.loc[sweep, "flips_at"] == ([LABELS[rung]] if rung else []), sweep
    assert decisions.loc["steady", "winner"] == "second" and decisions.loc["unstable", "winner"] == "first"
    assert decisions.loc["unstable", "verdict"] == "less stable"  # 6 of 6 diverged: Fisher p = 0.002


def test_decisions_the_reference_does_not_resolve_are_counted_apart(result):
    decisions = result.decisions.set_index("sweep")
    assert decisions.loc["negligible", "reference"] == "negligible"
    assert decisions.loc["unresolved", "reference"] == "unresolved"
    assert (result.counted("decided"), result.counted("negligible"), result.counted("unresolved")) == (6, 1, 1)
    assert (result.rungs["decisions"] == 6).all()
    assert result.picks.query("sweep in ['negligible', 'unresolved']")["agrees"].isna().all()


def test_each_rungs_accuracy_and_interval_match_the_planted_signs(result):
    gaps = {sweep: gaps for sweep, (gaps, _) in DECIDED.items()} | {"unstable": [0.05] * 4, "deep": [-0.05] * 4}
    order = {sweep: np.sign(g[-1]) if sweep != "unstable" else 1 for sweep, g in gaps.items()}
    for r, row in result.rungs.iterrows():
        agree = sum(np.sign(g[r]) == order[sweep] for sweep, g in gaps.items())
        assert (row["agree"], row["accuracy"]) == (agree, agree / 6)
        assert row["low"] <= agree / 6 <= row["high"]
        assert row["resolved_same"] == agree and row["resolved_opposite"] == 6 - agree  # 0.05 apart, noise 0.005
    assert result.rungs["accuracy"].tolist() == [3 / 6, 4 / 6, 5 / 6]
    assert np.allclose(result.rungs["compute_share"], [rung.compute / RUNGS[-1].compute for rung in RUNGS[:-1]])
    assert result.rungs["meets"].tolist() == [False, False, True] and result.cheapest["rung"] == LABELS[2]


@pytest.mark.slow
def test_the_interval_covers_the_planted_accuracy_in_90_percent_of_replays():
    for rung in simulation.coverage(replays=20, replicates=500):
        assert rung["covered"] >= 0.9, rung


def test_every_pair_of_a_sweeps_arms_is_a_decision(tmp_path):
    curves = {"a": (2.0, 60.0, 0.14), "b": (2.0, 61.0, 0.14), "c": (2.0, 50.0, 0.14)}
    synthetic.write_ladder(tmp_path, "three", curves, RUNGS, seeds=3, noise=0.001)
    found = decision_accuracy(decision_runs(tmp_path, ["three"], "final_val_loss"))
    assert list(zip(found.decisions["first"], found.decisions["second"])) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert (found.rungs["accuracy"] == 1).all()  # the planted curves never cross


@pytest.mark.slow
def test_the_command_prints_the_tables_csv_and_json(store, capsys):
    assert main(["decisions", *SWEEPS, "--results", str(store), "--target", "0.75"]) == 0
    out = capsys.readouterr().out
    assert "the reference is the largest rung, d_model=512,n_layers=5" in out
    assert f"Cheapest rung that decides (its accuracy's 95% lower bound ≥ 0.75): {LABELS[2]}" in out
    assert main(["decisions", *SWEEPS, "--results", str(store), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["cheapest"] is None and data["reference"]["rung"] == LABELS[-1]
    assert [row["accuracy"] for row in data["rungs"]] == pytest.approx([3 / 6, 4 / 6, 5 / 6])
    assert main(["decisions", *SWEEPS, "--results", str(store), "--format", "csv"]) == 0
    rungs, decisions, picks = capsys.readouterr().out.strip().split("\n\n")
    assert len(rungs.splitlines()) == 4 and len(decisions.splitlines()) == 1 + len(SWEEPS)


@pytest.mark.parametrize("argv, message", [
    (["steady", "stedy"], "no sweep named 'stedy' in the results store; did you mean 'steady'?"),
    (["steady", "steady"], "sweep 'steady' is named twice; name each sweep once."),
    (["steady", "--metric", "final_val_los"],
     "metric 'final_val_los' is not a numeric column of the runs view; did you mean 'final_val_loss'?"),
    (["steady", "--target", "1.5"], "--target 1.5 is invalid: a decision accuracy, in (0, 1]."),
    (["steady", "--min-effect", "0"], "--min-effect 0 is invalid: must be a positive number (nats)."),
    (["steady", "--data", "x.txt"], "--data needs --run (it is the corpus the benchmark trains on)."),
    ([], "give the ladder sweeps to analyse (SWEEP …), or --run to run the decision benchmark."),
])
def test_bad_input_is_one_line_and_exit_2(store, capsys, argv, message):
    assert main(["decisions", *argv, "--results", str(store)]) == 2
    assert capsys.readouterr().err == f"harness decisions: error: {message}\n"


def test_a_sweep_that_is_no_ladder_is_refused(planted_store, capsys):
    assert main(["decisions", "planted", "--results", str(planted_store[0])]) == 2
    assert "sweep 'planted' is not a ladder: no arm has finished runs at two sizes" in capsys.readouterr().err


def test_a_rung_whose_survivors_look_better_picks_the_side_that_did_not_diverge(tmp_path):
    # The second variant is 0.05 ahead on every seed it finishes, but diverges on half the seeds of rung 0 (where
    # the first completes) and on every seed of the reference: discordant divergences rank it behind (the one
    # outcome model), so rung 0 picks the first variant, as the reference decides; rungs 1 and 2 see no
    # divergence and pick the second.
    diverged = {(1, 0, seed) for seed in range(3)} | {(1, 3, seed) for seed in range(6)}
    planted.write_decision(tmp_path, "survivor", [-0.05] * 4, RUNGS, seeds=6, noise=0.005, diverged=diverged)
    found = decision_accuracy(decision_runs(tmp_path, ["survivor"], "final_val_loss"))
    assert found.decisions["reference"].tolist() == ["decided"] and found.decisions["winner"].tolist() == ["first"]
    assert found.rungs["agree"].tolist() == [1, 0, 0]
