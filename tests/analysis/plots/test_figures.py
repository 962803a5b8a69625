import io

import numpy as np
import pytest
from matplotlib import image
from matplotlib.backends.backend_agg import FigureCanvasAgg

from analysis.plots import FIGURES, make_context
from analysis.reading.frames import load_sweep


@pytest.fixture(scope="module")
def context(planted_store):
    return make_context(load_sweep(planted_store[0], "planted"), "final_val_loss", ema=0.5, log=True)


def _ink(png: bytes) -> float:
    """Fraction of pixels that are not (near) white."""
    pixels = image.imread(io.BytesIO(png))[..., :3]
    return float((pixels.min(axis=-1) < 0.9).mean())


# a ladder's figures: tests/analysis/ladder/test_figure.py and test_decision_figure.py
@pytest.mark.slow
@pytest.mark.parametrize("name", [name for name in FIGURES if name not in ("ladder", "decisions")])
def test_every_figure_draws_ink_and_keeps_runnable_sql(context, name):
    plot = FIGURES[name](context)
    assert _ink(plot.png()) > 0.01
    assert plot.title and plot.caption and plot.sql
    for text in plot.sql:
        context.sweep.con.sql(text).fetchall()  # the SQL shown under the figure runs as it is


def test_each_arm_keeps_one_colour_and_the_baseline_the_first(context):
    assert context.baseline == "baseline"
    assert list(context.colors)[0] == "baseline"
    assert len(set(context.colors.values())) == len(context.colors)


def test_save_follows_the_suffix(context, tmp_path):
    plot = FIGURES["lr"](context)
    for suffix, magic in ((".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")):
        plot.save(tmp_path / f"figure{suffix}")
        assert (tmp_path / f"figure{suffix}").read_bytes().startswith(magic)


def test_a_sweep_without_probes_says_so_instead_of_a_blank_panel(tmp_path):
    import db

    for seed in range(2):
        with db.RunWriter.open(tmp_path, f"bare-{seed}", sweep="bare", arm="a", seed=seed,
                               config={"lr": 1e-3}) as writer:
            writer.log_metrics(9, {"val_loss": 3.0 + seed, "train_loss": 3.1})
    context = make_context(load_sweep(tmp_path, "bare"), "final_val_loss")
    for name in ("attention", "logits", "spikes", "compute"):
        plot = FIGURES[name](context)
        texts = [t.get_text() for ax in plot.figure.axes for t in ax.texts]
        assert any(text.startswith("no ") for text in texts), name
        assert np.isfinite(_ink(plot.png()))


def test_arm_names_are_plain_text_not_mathtext(tmp_path):
    import synthetic

    synthetic.write_planted(tmp_path, "math", {r"$\notacommand$": (0.0, 0.01, 2), "b": (0.1, 0.01, 2)}, steps=12,
                            spikes=(3,))
    context = make_context(load_sweep(tmp_path, "math"), "final_val_loss")
    for name in ("lr", "spikes", "cost", "compute"):  # each labels arms its own way; curves below, as draw_bands does
        assert FIGURES[name](context).png().startswith(b"\x89PNG")  # a mathtext parse of the name would raise here
    curves = FIGURES["curves"](context)
    assert curves.png().startswith(b"\x89PNG")
    legend = curves.figure.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == [r"\$\notacommand\$", "b"]  # drawn as the literal name


def test_legends_and_arm_labels_fit_inside_the_figure(tmp_path):
    import synthetic

    long = "qk_norm=rmsnorm,attn_softcap=50,z_loss=0.0001"
    synthetic.write_planted(tmp_path, "long", {long: (0.0, 0.01, 2), "base": (0.1, 0.01, 2)}, steps=12, spikes=(3,))
    context = make_context(load_sweep(tmp_path, "long"), "final_val_loss", baseline="base")
    for name in ("curves", "spikes", "cost"):
        figure = FIGURES[name](context).figure
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        texts = [t for legend in figure.legends for t in legend.get_texts()]
        texts += [label for ax in figure.axes for label in ax.get_yticklabels() if label.get_text()]
        for text in texts:
            extent = text.get_window_extent(renderer)
            assert extent.x0 >= 0 and extent.x1 <= figure.bbox.x1, (name, text.get_text())


@pytest.fixture(scope="module")
def spread(spread_store):
    return make_context(load_sweep(spread_store, "sp"), "final_val_loss", baseline="base")


def last_step_band(growths):
    """The oracle at the last step: layer 0's max attention logit is 5·growth + 1 (head 1), so the band is the
    95% t-interval of the mean of their logarithms, exponentiated."""
    from scipy import stats

    logs = np.log([5.0 * g + 1.0 for g in growths])
    low, high = stats.t.interval(0.95, len(logs) - 1, loc=logs.mean(), scale=stats.sem(logs))
    return np.exp(low), np.exp(logs.mean()), np.exp(high)


def test_a_band_on_a_log_axis_follows_the_curve_instead_of_falling_to_the_axis(spread):
    ax = FIGURES["attention"](spread).figure.axes[0]
    assert ax.get_yscale() == "log"
    fills = [c for c in ax.collections if len(c.get_paths()) and len(c.get_paths()[0].vertices) > 4]
    base = fills[0].get_paths()[0].vertices  # the baseline's band, drawn first
    low, mean, high = last_step_band((10.0, 300.0, 3000.0))
    assert base[:, 1].min() > 0  # an arithmetic interval reaches below zero here, which the log axis clips to its floor
    at_end = base[base[:, 0] == 59][:, 1]
    assert (at_end.min(), at_end.max()) == pytest.approx((low, high), rel=1e-6)
    line = [line for line in ax.get_lines() if line.get_label() == "base"][0]
    assert line.get_ydata()[-1] == pytest.approx(mean, rel=1e-6)  # the geometric mean, not the arithmetic one


def test_the_spike_timeline_makes_room_for_wide_arm_names(tmp_path):
    import synthetic

    wide = "WMWMWMWMWMWMWMWMWMWMWMWMWMWM"  # as many letters as a narrow name takes twice the room
    synthetic.write_planted(tmp_path, "wide", {wide: (0.0, 0.01, 2), "base": (0.1, 0.01, 2)}, steps=12, spikes=(3,))
    figure = FIGURES["spikes"](make_context(load_sweep(tmp_path, "wide"), "final_val_loss", baseline="base")).figure
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    labels = [label for label in figure.axes[0].get_yticklabels() if label.get_text()]
    assert {label.get_text() for label in labels} == {wide, "base"}
    for label in labels:
        assert label.get_window_extent(canvas.get_renderer()).x0 >= 0, label.get_text()
