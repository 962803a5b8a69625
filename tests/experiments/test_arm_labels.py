"""Display labels for arms: given in `grid(axis={label: value})` or `Ablation(arms={name: label})`, carried by
every cell and its plan row, while the arms' names (their identity, and so their run keys) stay as they were."""

import pytest

from experiments import Ablation, SweepError, expand, grid
from experiments.plan.cell import Cell

MLP = {"GELU": "gelu", "SwiGLU": "swiglu"}  # the tiny preset's MLP is SwiGLU: that arm is named 'base'


def make(**kwargs):
    return Ablation(**{"name": "t", "question": "does it help?", "base": "tiny", **kwargs})


def test_a_dict_axis_labels_its_values_and_leaves_points_and_names_alone():
    labelled, plain = grid(mlp=MLP), grid(mlp=["gelu", "swiglu"])
    assert list(labelled) == list(plain) == [{"mlp": "gelu"}, {"mlp": "swiglu"}]
    assert [labels for _, labels in labelled.labelled()] == [{"mlp": "GELU"}, {"mlp": "SwiGLU"}]
    assert [c.arm for c in expand(make(grid=labelled)).cells] == [c.arm for c in expand(make(grid=plain)).cells]


def test_labels_survive_products_unions_and_duplicates():
    product = grid(mlp=MLP, qk_norm=["none", "rmsnorm"])
    assert [labels for _, labels in product.labelled()] == [{"mlp": "GELU"}] * 2 + [{"mlp": "SwiGLU"}] * 2
    union = grid(mlp=MLP) + grid(mlp="gelu") + grid(qk_norm={"QK-norm": "rmsnorm"})
    assert list(union.labelled()) == [({"mlp": "gelu"}, {"mlp": "GELU"}), ({"mlp": "swiglu"}, {"mlp": "SwiGLU"}),
                                      ({"qk_norm": "rmsnorm"}, {"qk_norm": "QK-norm"})]


def test_cells_carry_the_label_and_run_keys_do_not_change():
    labelled, plain = expand(make(grid=grid(mlp=MLP))), expand(make(grid=grid(mlp=["gelu", "swiglu"])))
    assert [(c.arm, c.arm_label) for c in labelled.cells] == [("mlp=gelu", "GELU"), ("base", "SwiGLU")]
    assert [c.run_id for c in labelled.cells] == [c.run_id for c in plain.cells]
    assert [c.arm_label for c in plain.cells] == [None, None]


def test_a_product_label_names_the_unlabelled_switch_that_differs():
    plan = expand(make(grid=grid(mlp=MLP, qk_norm=["none", "rmsnorm"])))
    assert [(c.arm, c.arm_label) for c in plan.cells] == [
        ("mlp=gelu", "GELU"), ("mlp=gelu,qk_norm=rmsnorm", "GELU, qk_norm=rmsnorm"),
        ("base", "SwiGLU"), ("qk_norm=rmsnorm", "SwiGLU, qk_norm=rmsnorm")]


def test_ablation_arms_labels_by_name_over_the_grids():
    plan = expand(make(grid=grid(mlp=MLP), arms={"base": "SwiGLU (Llama)"}))
    assert [(c.arm, c.arm_label) for c in plan.cells] == [("mlp=gelu", "GELU"), ("base", "SwiGLU (Llama)")]


def test_the_label_round_trips_through_the_plan_row_and_an_old_row_has_none():
    cell = expand(make(grid=grid(mlp=MLP))).cells[0]
    row = cell.plan_row()
    assert row["arm_label"] == "GELU" and Cell.from_plan_row(row).arm_label == "GELU"
    del row["arm_label"]  # a plan written before labels existed
    assert Cell.from_plan_row(row).arm_label is None


def test_bad_labels_are_refused_with_the_fix():
    with pytest.raises(SweepError, match="arms= names no arm 'mlp=gelo'; did you mean 'mlp=gelu'?"):
        expand(make(grid=grid(mlp=["gelu", "swiglu"]), arms={"mlp=gelo": "GELU"}))
    with pytest.raises(ValueError, match="must map arm names to non-empty display labels"):
        make(arms={"base": ""})
    with pytest.raises(ValueError, match="a label must be non-empty text, got 3"):
        grid(mlp={3: "gelu"})
