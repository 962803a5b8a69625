"""The interactive fixed figures' Plotly JSON: bands on log axes computed on the logarithms (positive, following the
curve), and a spike timeline whose arm axis makes room for its longest label."""

import numpy as np
import pytest

from analysis.explore.fixed import FIGURES
from analysis.plots import make_context
from analysis.reading.frames import load_sweep


@pytest.fixture(scope="module")
def spread(spread_store):
    return make_context(load_sweep(spread_store, "sp"), "final_val_loss", baseline="base")


def test_the_attention_band_on_its_log_axis_is_the_interval_of_the_mean_log(spread):
    from scipy import stats

    figure = FIGURES["attention"](spread).plotly
    assert figure["layout"]["yaxis"]["type"] == "log"
    band, line = [t for t in figure["data"] if t["meta"] == "base" and t["xaxis"] == "x"][:2]
    assert band["fill"] == "toself" and min(band["y"]) > 0
    logs = np.log([5.0 * g + 1.0 for g in (10.0, 300.0, 3000.0)])  # layer 0's max logit at the last step
    low, high = stats.t.interval(0.95, 2, loc=logs.mean(), scale=stats.sem(logs))
    n = len(line["x"])
    assert line["x"][-1] == 59 and line["y"][-1] == pytest.approx(np.exp(logs.mean()))
    # the polygon turns at step 59
    assert (band["y"][n - 1], band["y"][n]) == pytest.approx((np.exp(high), np.exp(low)))
