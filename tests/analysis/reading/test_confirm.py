"""Honest search: a searched arm with confirmation cells is compared on them alone, never on the trials its
configuration was chosen on, and the output says which rows were.

The statistics are checked on simulated sweeps against scipy (`confirm_simulation.py`: two identical arms, the
baseline's search lost half its trials to divergence); the reading on stores written with `db.RunWriter` and the
real `db.write_trial` / `db.write_confirmation` files, against values computed here by hand."""

import json

import numpy as np
import pytest
from scipy import stats as scipy_stats

import confirm_simulation as simulation
import db
import synthetic
from analysis.comparison.sweep import compare
from analysis.reading.frames import load_sweep


@pytest.fixture(scope="module")
def sim():
    return simulation.search_sweeps(np.random.default_rng(2024), 20_000)


def test_the_oracle_shows_the_selection_bias_and_its_removal(sim):
    best_trial, confirmed = simulation.oracle_better(sim, False).mean(), simulation.oracle_better(sim, True).mean()
    assert best_trial > 0.08  # selection on the tested noise: ~11% false `better`
    assert 0.015 < confirmed < 0.035  # fresh seeds: the nominal 2.5% of a two-sided test at 0.05


@pytest.mark.slow
@pytest.mark.parametrize("confirmed", [False, True])
def test_compare_tests_exactly_the_oracles_pairs(sim, confirmed):
    """On each of 800 simulated sweeps, the p-value `harness compare` computes from every row it reads (trials
    and confirmations) is scipy's on the outcomes picked by numpy: each seed's best trial, or only the
    confirmations where there are some."""
    head = {key: value[:800] for key, value in sim.items()}
    rows = simulation.compared(head, confirmed)
    p, delta = simulation.oracle_p(head, confirmed)
    np.testing.assert_allclose([row["p"] for row in rows], p, rtol=1e-9)
    np.testing.assert_allclose([row["delta"] for row in rows], delta, rtol=1e-9)
    better = np.mean([row["verdict"] == "better" for row in rows])
    if confirmed:
        assert better <= 0.05 and {row["seeds"] for row in rows} == {simulation.SEEDS * simulation.CONFIRM}
    else:
        assert better > 0.07


def _trial(results, sweep, arm, study, trial, lr, final, seed=0, tuned=("lr",)):
    run_id = f"{arm}-t{trial}"
    synthetic.write_run(results, run_id, sweep=sweep, arm=arm, seed=seed, lr=lr, final=final, steps=12)
    values = {"lr": lr} if "lr" in tuned else {"warmup_steps": trial}
    db.write_trial(results, sweep, study, {"arm": arm, "lr": lr, "seed": seed, "trial": trial, "run_id": run_id,
                                           "arm_values": json.dumps(values)})


def _confirmation(results, sweep, arm, study, i, confirms, lr, final, seed, tuned=("lr",)):
    run_id = f"{arm}-c{i}"
    synthetic.write_run(results, run_id, sweep=sweep, arm=arm, seed=seed, lr=lr, final=final, steps=12)
    values = {"lr": lr} if "lr" in tuned else {"warmup_steps": confirms}
    db.write_confirmation(results, sweep, study, i, {"arm": arm, "lr": lr, "seed": seed, "confirms": confirms,
                                                     "run_id": run_id, "arm_values": json.dumps(values)})


FRESH = (1_000_000, 2_000_000)
# arm: (its trials' finals, the trial chosen, its confirmations' finals); 'lucky' won its search by noise.
SEARCHES = {"base": ((3.10, 2.90, 3.30), 1, (2.95, 2.99)), "lucky": ((2.60, 3.20, 3.40), 0, (3.05, 3.02)),
            "unconfirmed": ((2.70, 2.80, 3.00), 0, ())}


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    """A searched sweep (the LR tuned, one study per arm) whose 'base' and 'lucky' have confirmation cells."""
    results = tmp_path_factory.mktemp("honest") / "results"
    db.write_sweep(results, "honest", {"question": "?", "baseline": "base"}, [])
    for study, (arm, (trials, chosen, confirmations)) in enumerate(SEARCHES.items()):
        for trial, final in enumerate(trials):
            _trial(results, "honest", arm, study, trial, 1e-3 * (trial + 1), final)
        for i, (seed, final) in enumerate(zip(FRESH, confirmations)):
            _confirmation(results, "honest", arm, study, i, chosen, 1e-3 * (chosen + 1), final, seed)
    return results


def test_a_confirmed_arm_is_compared_on_its_confirmations_alone(honest):
    rows = {row["arm"]: row for row in compare(load_sweep(honest, "honest"))}
    base, lucky = (np.array(SEARCHES[arm][2]) for arm in ("base", "lucky"))
    assert rows["lucky"]["lr"] is None and rows["lucky"]["seeds"] == 2 and rows["lucky"]["n_pairs"] == 2
    assert rows["lucky"]["mean"] == pytest.approx(lucky.mean()) and rows["base"]["mean"] == pytest.approx(base.mean())
    assert rows["lucky"]["delta"] == pytest.approx((lucky - base).mean())  # paired on the fresh seeds
    assert rows["lucky"]["p"] == pytest.approx(scipy_stats.ttest_rel(lucky, base).pvalue)
    assert rows["lucky"]["delta"] > 0  # its best trial (2.60) was luck: on fresh seeds it is not ahead
    assert rows["lucky"]["selection"] == rows["base"]["selection"] == "confirmed on 2 fresh seeds"


def test_an_arm_not_yet_confirmed_says_its_seed_outcome_is_its_best_trial(honest):
    row = next(r for r in compare(load_sweep(honest, "honest")) if r["arm"] == "unconfirmed")
    assert row["selection"] == "best trial per seed" and row["mean"] == pytest.approx(2.70)
    assert row["n_pairs"] == 0  # its trials' seed is not among the baseline's confirmation seeds


def test_confirmations_of_a_search_that_does_not_tune_the_lr_keep_their_studys_lr(tmp_path):
    results = tmp_path / "results"
    db.write_sweep(results, "warm", {"question": "?", "baseline": "base"}, [])
    for study, arm in enumerate(("base", "other")):
        for lr_index, lr in enumerate((1e-3, 3e-3)):
            index = 2 * study + lr_index
            for trial, final in enumerate((3.0, 2.8)):
                _trial(results, "warm", f"{arm}", index, 10 * index + trial, lr, final + lr, tuned=())
            for i, seed in enumerate(FRESH):
                run_id = f"{arm}-{lr}-c{i}"
                synthetic.write_run(results, run_id, sweep="warm", arm=arm, seed=seed, lr=lr, final=2.9 + lr + 0.01 * i,
                                    steps=12)
                db.write_confirmation(results, "warm", index, i,
                                      {"arm": arm, "lr": lr, "seed": seed, "confirms": 10 * index + 1,
                                                                 "run_id": run_id,
                                                                 "arm_values": json.dumps({"warmup_steps": 1})})
    rows = compare(load_sweep(results, "warm"))
    assert [(r["arm"], r["lr"], r["seeds"], r["selection"]) for r in rows] == [
        (arm, lr, 2, "confirmed on 2 fresh seeds") for arm in ("base", "other") for lr in (1e-3, 3e-3)]
    assert all(r["mean"] == pytest.approx(2.905 + r["lr"]) for r in rows)


def test_harness_compare_prints_the_selection_column(honest, capsys):
    from cli.main import main

    assert main(["compare", "honest", "--results", str(honest), "--format", "json"]) == 0
    rows = {row["arm"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["lucky"]["selection"] == "confirmed on 2 fresh seeds" and rows["lucky"]["seeds"] == 2
    assert rows["unconfirmed"]["selection"] == "best trial per seed"


def test_a_sweep_without_a_search_has_no_selection_column(planted_store, capsys):
    from cli.main import main

    assert main(["compare", "planted", "--results", str(planted_store[0]), "--format", "json"]) == 0
    assert "selection" not in json.loads(capsys.readouterr().out)[0]
