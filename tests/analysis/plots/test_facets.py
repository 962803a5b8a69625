import db
import synthetic
from analysis.plots.facets import facet_switch
from analysis.reading.frames import load_sweep


def _write(results, sweep, arms, axes):
    """arms: name → config switches; one seed each at two LRs, planned with `axes`."""
    cells = []
    for i, (arm, config) in enumerate(arms.items()):
        for lr in (1e-3, 1e-2):
            run_id = f"{sweep}-{i}-{lr}"
            synthetic.write_run(results, run_id, sweep=sweep, arm=arm, seed=0, lr=lr, final=3.0, steps=12,
                                config=config)
            cells.append({"arm": arm, "lr": lr, "seed": 0, "run_id": run_id})
    db.write_sweep(results, sweep, {"question": "?", "axes": axes}, cells)


def test_a_product_grid_facets_by_its_second_switch(tmp_path):
    arms = {f"{q}-{z}": {"qk_norm": q, "z_loss": z} for q in ("none", "rmsnorm") for z in (0.0, 1e-4)}
    _write(tmp_path, "product", arms, ["qk_norm", "z_loss"])
    assert facet_switch(load_sweep(tmp_path, "product")) == "z_loss"


def test_a_union_grid_stays_one_panel(tmp_path):
    arms = {"base": {"qk_norm": "none", "z_loss": 0.0}, "qk": {"qk_norm": "rmsnorm", "z_loss": 0.0},
            "z": {"qk_norm": "none", "z_loss": 1e-4}}
    _write(tmp_path, "union", arms, ["qk_norm", "z_loss"])
    assert facet_switch(load_sweep(tmp_path, "union")) is None


def test_a_width_axis_facets_first(tmp_path):
    arms = {f"{q}-{w}": {"qk_norm": q, "d_model": w} for q in ("none", "rmsnorm") for w in (64, 128)}
    _write(tmp_path, "widths", arms, ["qk_norm", "d_model"])
    assert facet_switch(load_sweep(tmp_path, "widths")) == "d_model"


def test_the_lr_figure_has_a_panel_per_value_and_every_arm_in_its_legend(tmp_path):
    from analysis.plots import FIGURES, make_context

    arms = {f"{q}-{z}": {"qk_norm": q, "z_loss": z} for q in ("none", "rmsnorm") for z in (0.0, 1e-4)}
    _write(tmp_path, "product", arms, ["qk_norm", "z_loss"])
    plot = FIGURES["lr"](make_context(load_sweep(tmp_path, "product"), "final_val_loss"))
    assert [ax.get_title() for ax in plot.figure.axes] == ["z_loss=0.0", "z_loss=0.0001"]
    assert sorted(t.get_text() for t in plot.figure.legends[0].get_texts()) == sorted(arms)
