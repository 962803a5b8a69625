"""The decision benchmark asks its questions of a clean design: at least ten binary decisions, each a ladder of at
least four rungs under μP based at its smallest width, three seeds, every arm at equal parameters and at the LR it
was given at every rung; the ladder's smallest rung is the tuning sweep's cells at those LRs, so it is adopted,
not trained again."""

import itertools

import pytest

from ablations import decisions as bench
from experiments import expand
from harness import calc


def carried(d) -> dict[str, float]:
    """An LR per arm, different for the two arms (so that each must keep its own)."""
    return dict(zip(d.arms, bench.LRS[1:3]))


@pytest.fixture(scope="module")
def tuning():
    return expand(bench.ablation)


def test_at_least_ten_binary_decisions_each_a_ladder_of_four_rungs_under_mup(tuning):
    assert len(bench.DECISIONS) >= 10 and len({d.name for d in bench.DECISIONS}) == len(bench.DECISIONS)
    assert len(bench.WIDTHS) >= 4 and bench.SEEDS >= 3
    for d in bench.DECISIONS:
        plan = expand(bench.ladder_ablation(d.name, carried(d)))
        assert {arm.split("@")[0] for arm in plan.arms} == set(d.arms) and len(set(d.arms)) == 2
        assert {cell.model.d_model for cell in plan.cells} == set(bench.WIDTHS)
        mup = {(cell.model.parametrization, cell.model.mup_base_width) for cell in plan.cells}
        assert mup == {("mup", bench.WIDTHS[0])}
        assert len({cell.seed for cell in plan.cells}) == bench.SEEDS
        assert plan.baseline.split("@")[0] == d.arms[0] and plan.baseline.endswith(f"d_model={bench.WIDTHS[-1]}")


def test_each_arm_keeps_its_own_lr_at_every_rung():
    for d in bench.DECISIONS:
        lrs = carried(d)
        plan = expand(bench.ladder_ablation(d.name, lrs))
        assert {(cell.arm.split("@")[0], cell.lr) for cell in plan.cells} == set(lrs.items())
        assert len(plan.cells) == 2 * len(bench.WIDTHS) * bench.SEEDS


def test_the_smallest_rung_of_every_ladder_is_the_tuning_sweeps_cells(tuning):
    tuned = {cell.run_id for cell in tuning.cells}
    assert {cell.lr for cell in tuning.cells} == set(bench.LRS) and len(tuning.arms) == len(bench.arm_points())
    for d in bench.DECISIONS:
        plan = expand(bench.ladder_ablation(d.name, carried(d)))
        smallest = [cell for cell in plan.cells if plan.arm_rungs[cell.arm] == 0]
        assert smallest and all(cell.run_id in tuned for cell in smallest)


def test_every_arm_has_the_parameters_of_its_rungs_base():
    for d in bench.DECISIONS:
        plan = expand(bench.ladder_ablation(d.name, carried(d)))
        width = lambda cell: cell.model.d_model  # noqa: E731
        for rung, cells in itertools.groupby(sorted(plan.cells, key=width), key=width):
            base = calc.params(bench.BASE.replace(d_model=rung))
            assert all(abs(cell.params - base) <= 0.01 * base for cell in cells), (d.name, rung)


def test_an_unknown_decision_or_a_missing_lr_is_refused():
    with pytest.raises(KeyError, match="no decision 'nrom'"):
        bench.ladder_ablation("nrom", {})
    with pytest.raises(KeyError, match="decision 'norm': no LR for arm norm=layernorm"):
        bench.ladder_ablation("norm", {"base": 1e-3})
