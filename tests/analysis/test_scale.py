import pytest

import synthetic
from analysis.frames import load_sweep
from analysis.scale import rankings


def _write(results, sweep, finals):
    """finals: (qk_norm, d_model) → final loss, two seeds each (the second 0.01 worse)."""
    for (qk_norm, width), final in finals.items():
        for seed in range(2):
            synthetic.write_run(results, f"{sweep}-{qk_norm}-{width}-{seed}", sweep=sweep, arm=f"{qk_norm}-{width}",
                                seed=seed, lr=1e-3, final=final + 0.01 * seed, steps=12,
                                config={"d_model": width, "qk_norm": qk_norm, "d_ff": 3 * width})


def test_a_ranking_that_reverses_with_width_is_flagged(tmp_path):
    _write(tmp_path, "grow", {("none", 128): 3.0, ("rmsnorm", 128): 2.9, ("none", 256): 2.6, ("rmsnorm", 256): 2.7})
    table, reversals = rankings(load_sweep(tmp_path, "grow"), "final_val_loss")
    assert set(table["variant"]) == {"qk_norm=none", "qk_norm=rmsnorm"}  # d_ff follows d_model: not a variant
    assert table[table["scale"] == 128].set_index("variant")["rank"].to_dict() == {"qk_norm=rmsnorm": 1, "qk_norm=none": 2}
    assert table.loc[(table["scale"] == 256) & (table["variant"] == "qk_norm=none"), "loss"].item() == pytest.approx(2.605)
    assert reversals == ["qk_norm=rmsnorm beats qk_norm=none at d_model=128 but not at d_model=256"]


def test_a_ranking_that_holds_has_no_flag(tmp_path):
    _write(tmp_path, "hold", {("none", 128): 3.0, ("rmsnorm", 128): 2.9, ("none", 256): 2.8, ("rmsnorm", 256): 2.7})
    _, reversals = rankings(load_sweep(tmp_path, "hold"), "final_val_loss")
    assert reversals == []


def test_a_sweep_at_one_scale_has_no_ranking(planted_store):
    assert rankings(load_sweep(planted_store[0], "planted"), "final_val_loss") is None
