"""grid(), zip_() and + : the points an ablation's arms come from."""

import pytest

from experiments import grid, zip_


def test_grid_is_the_cartesian_product_in_axis_order():
    points = list(grid(norm=["rmsnorm", "layernorm"], qk_norm=["none", "rmsnorm"]))
    assert points == [
        {"norm": "rmsnorm", "qk_norm": "none"}, {"norm": "rmsnorm", "qk_norm": "rmsnorm"},
        {"norm": "layernorm", "qk_norm": "none"}, {"norm": "layernorm", "qk_norm": "rmsnorm"},
    ]


def test_union_keeps_order_and_drops_duplicates():
    union = grid(mlp=["gelu", "swiglu"]) + grid(mlp="swiglu") + grid(qk_norm="rmsnorm")
    assert list(union) == [{"mlp": "gelu"}, {"mlp": "swiglu"}, {"qk_norm": "rmsnorm"}]
    assert union.axes == ("mlp", "qk_norm")


def test_zip_moves_axes_together_and_combines_with_other_axes():
    points = list(grid(zip_(n_layers=[1, 2], d_model=[96, 64]), mlp=["gelu", "relu"]))
    assert points == [
        {"n_layers": 1, "d_model": 96, "mlp": "gelu"}, {"n_layers": 1, "d_model": 96, "mlp": "relu"},
        {"n_layers": 2, "d_model": 64, "mlp": "gelu"}, {"n_layers": 2, "d_model": 64, "mlp": "relu"},
    ]
    with pytest.raises(ValueError, match="same number of values; got n_layers: 2, d_model: 3"):
        zip_(n_layers=[1, 2], d_model=[1, 2, 3])


def test_empty_grid_and_the_base_point():
    assert list(grid()) == [{}]
    assert len(grid(norm=[])) == 0
