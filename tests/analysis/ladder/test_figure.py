"""The ladder figure, as a seaborn PNG (`harness plot ladder`) and as the report's Plotly JSON: the runs as
points, a fitted curve per arm out to the target with its band, the target marked, and the SQL behind it."""

import numpy as np
import pytest
from matplotlib.collections import PathCollection

from analysis.explore.ladder import ladder_figure
from analysis.ladder.analyse import analyse_ladder
from analysis.plots import FIGURES, make_context
from analysis.reading.frames import load_sweep

pytestmark = pytest.mark.slow  # waits on processes or builds a shared store first


def test_the_png_draws_every_run_a_curve_and_band_per_arm_and_the_target(ladder_store):
    results, planted = ladder_store
    context = make_context(load_sweep(results, "lad"), "final_val_loss", target_flops=1e17)
    plot = FIGURES["ladder"](context)
    ax = plot.figure.axes[0]
    points = np.concatenate([c.get_offsets() for c in ax.collections if isinstance(c, PathCollection)])
    kept = planted.copy()
    kept[1, 0, 2] = np.nan  # the diverged run is not a point
    assert np.allclose(sorted(points[:, 1]), sorted(kept[~np.isnan(kept)]))  # every run drawn, at its stored loss
    curves = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(curves) == 2 and all(line.get_xdata()[-1] == 1e17 for line in curves)
    assert [line.get_xdata()[0] for line in ax.get_lines() if len(line.get_xdata()) == 2] == [1e17]  # the target line
    assert ax.get_xscale() == "log" and plot.png().startswith(b"\x89PNG")
    for sql in plot.sql:
        context.sweep.con.sql(sql).fetchall()


def test_the_plotly_figure_has_points_band_and_curve_per_arm(ladder_store):
    results, _ = ladder_store
    ladder = analyse_ladder(load_sweep(results, "lad"), "final_val_loss", "base", axes=())
    figure = ladder_figure(ladder, "final_val_loss")
    kinds = [(trace["legendgroup"], trace["mode"], "fill" in trace) for trace in figure["data"]]
    assert kinds == [("base", "markers", False), ("base", "lines", True), ("base", "lines", False),
                     ("steeper", "markers", False), ("steeper", "lines", True), ("steeper", "lines", False)]
    assert figure["layout"]["xaxis"]["type"] == "log" and figure["layout"]["shapes"][0]["x0"] == ladder.target.value
    curve = figure["data"][2]
    assert curve["x"][-1] == ladder.target.value
    assert np.allclose(curve["y"], ladder.fit.curves[0].predict(np.array(curve["x"])))
