"""A plan row rebuilds its cell exactly: a worker trains the cell from the row alone, so a config the row cannot
reproduce would be trained as another model under this one's run id."""

import pytest

from experiments.declare.load import library_names, load_ablation
from experiments.plan.cell import Cell
from experiments.plan.expand import SweepError, expand
from harness.presets import PRESETS


def _round_trips(plan) -> list[str]:
    """Labels of the plan's cells whose row rebuilds other configs than the cell's own."""
    wrong = []
    for cell in plan.cells:
        again = Cell.from_plan_row(cell.plan_row())
        if (again.model, again.train, again.data, again.run_id) != (cell.model, cell.train, cell.data, cell.run_id):
            wrong.append(cell.label)
    return wrong


def test_a_gqa_arm_whose_kv_heads_equal_the_defaults_is_rebuilt_as_gqa():
    """llama3 has 8 query heads; its 4-KV-head arm equals the default's resolved n_kv_heads (4), so the arm's
    changed fields alone rebuild it with 8 (MHA)."""
    plan = expand(load_ablation("kv_heads")[0], preset="llama3", seeds=1)
    arm = next(cell for cell in plan.cells if cell.arm == "n_kv_heads=4")
    assert (arm.model.n_heads, arm.model.n_kv_heads) == (8, 4)
    assert Cell.from_plan_row(arm.plan_row()).model.n_kv_heads == 4


@pytest.mark.slow
@pytest.mark.parametrize("preset", [None, *sorted(PRESETS)])
def test_every_library_cell_is_rebuilt_from_its_plan_row(preset):
    wrong = {}
    for name in library_names():
        ablation, _ = load_ablation(name)
        if preset is not None and ablation.ladder is not None:
            continue  # a ladder sets its own widths; a preset's would not fit its rungs
        try:
            plan = expand(ablation, preset=preset, seeds=1)
        except SweepError:
            assert preset is not None  # a preset can make two arms one model: refused before training, not here
            continue
        found = _round_trips(plan)
        if found:
            wrong[name] = found[:3]
    assert wrong == {}
