import io

import numpy as np
import pytest
from matplotlib import image
from matplotlib.backends.backend_agg import FigureCanvasAgg

from analysis.frames import load_sweep
from analysis.plots import FIGURES, make_context


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
        with db.RunWriter.open(tmp_path, f"bare-{seed}", sweep="bare", arm="a", seed=seed, config={"lr": 1e-3}) as writer:
            writer.log_metrics(9, {"val_loss": 3.0 + seed, "train_loss": 3.1})
    context = make_context(load_sweep(tmp_path, "bare"), "final_val_loss")
    for name in ("attention", "logits", "spikes", "compute"):
        plot = FIGURES[name](context)
        texts = [t.get_text() for ax in plot.figure.axes for t in ax.texts]
        assert any(text.startswith("no ") for text in texts), name
        assert np.isfinite(_ink(plot.png()))


def test_arm_names_are_plain_text_not_mathtext(tmp_path):
    import synthetic

    synthetic.write_planted(tmp_path, "math", {r"$\notacommand$": (0.0, 0.01, 2), "b": (0.1, 0.01, 2)}, steps=12, spikes=(3,))
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
