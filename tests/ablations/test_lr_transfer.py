"""`lr_transfer` asks its question of a clean grid: the same ×2 LR grid at every width under both
parametrizations, μP's base at the narrowest width, where the two arms are one model."""

import itertools

import torch

from experiments import expand
from experiments.declare.load import load_ablation
from harness.model import build_model


def test_every_width_and_parametrization_sees_the_same_doubling_lr_grid():
    plan = expand(load_ablation("lr_transfer")[0], seeds=1)
    lrs = sorted({cell.lr for cell in plan.cells})
    assert len(lrs) >= 5 and all(b == 2 * a for a, b in itertools.pairwise(lrs))
    widths = sorted({cell.model.d_model for cell in plan.cells})
    assert len(widths) == 3
    points = {(cell.model.d_model, cell.model.parametrization, cell.lr) for cell in plan.cells}
    assert points == set(itertools.product(widths, ("standard", "mup"), lrs)) and len(plan.cells) == len(points)
    assert {cell.model.mup_base_width for cell in plan.cells if cell.model.parametrization == "mup"} == {widths[0]}


def test_at_the_narrowest_width_both_parametrizations_are_one_model():
    plan = expand(load_ablation("lr_transfer")[0], seeds=1)
    narrowest = min(cell.model.d_model for cell in plan.cells)
    standard, mup = (next(cell.model for cell in plan.cells if cell.model.d_model == narrowest
                          and cell.model.parametrization == p) for p in ("standard", "mup"))
    weights = []
    for cfg in (standard, mup):
        torch.manual_seed(0)
        weights.append(build_model(cfg).state_dict())
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][name], weights[1][name]) for name in weights[0])
