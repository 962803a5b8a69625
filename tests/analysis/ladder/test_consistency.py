"""Decision consistency (DataDecide's pairwise decision accuracy) against orders planted by hand: the oracle counts
sign agreements of the planted means; only pairs the largest rung resolves are decisions."""

import itertools

import numpy as np

import ladder_simulation as simulation
import ladder_synthetic as synthetic
from analysis.ladder.consistency import decided_pairs, decision_consistency

# Planted mean loss per arm and rung. At the largest rung a < b and c < b; a and c tie exactly (no decision).
MEANS = {"a": [3.00, 2.80, 2.60], "b": [2.95, 2.82, 2.65], "c": [3.10, 2.90, 2.60]}


def planted_data():
    noise = np.random.default_rng(0).normal(0, 0.001, (3, 3, 4))
    noise[2, 2] = noise[0, 2]  # c's runs at the largest rung are a's exactly: a tie, never resolved
    losses = np.array(list(MEANS.values()))[..., None] + noise
    return simulation.arrays(losses, synthetic.chinchilla_rungs(3), list(MEANS))


def test_each_rung_is_scored_on_the_pairs_the_largest_rung_decides():
    table = decision_consistency(planted_data())
    decided = [(a, b) for a, b in itertools.combinations(MEANS, 2) if MEANS[a][-1] != MEANS[b][-1]]
    for r, row in table.iterrows():
        agree = sum(np.sign(MEANS[a][r] - MEANS[b][r]) == np.sign(MEANS[a][-1] - MEANS[b][-1]) for a, b in decided)
        assert (row["pairs"], row["agree"], row["share"]) == (len(decided), agree, agree / len(decided))
        # 0.02+ apart, noise 0.001
        assert (row["resolved_same"], row["resolved_opposite"]) == (agree, len(decided) - agree)
    assert table["share"].tolist() == [0.0, 0.5]
    assert decided_pairs(planted_data()) == 2
    rungs = synthetic.chinchilla_rungs(3)
    assert table["compute_share"].tolist() == [rung.compute / rungs[-1].compute for rung in rungs[:-1]]


def test_without_a_decision_at_the_largest_rung_there_is_no_share():
    data = planted_data()
    data.loss[:, -1] = data.loss[0, -1]  # every arm ties at the top
    table = decision_consistency(data)
    assert (table["pairs"] == 0).all() and table["share"].isna().all()
