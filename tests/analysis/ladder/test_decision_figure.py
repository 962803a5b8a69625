"""The decisions figure, as a seaborn PNG (`harness plot decisions`, sweeps pooled with --also), as the report's
Plotly JSON, and on the page of a ladder's report: each rung's accuracy with its interval, and each decision's
pick at every rung where it was planted to agree or flip."""

import json
import re
from html import unescape

import numpy as np
import pytest
from matplotlib.colors import to_hex

import decisions_synthetic as planted
import ladder_synthetic as synthetic
from analysis.explore.decisions import decisions_figure
from analysis.ladder.decision_runs import decision_runs
from analysis.ladder.decisions import decision_accuracy
from analysis.plots.decisions import COLORS, draw
from analysis.report import write_report
from cli.main import main

RUNGS = synthetic.chinchilla_rungs(3)
GAPS = {"steady": [-0.05] * 3, "flip1": [0.05, -0.05, -0.05], "late": [0.05, 0.05, -0.05]}
AGREE = {"steady": [True, True], "flip1": [False, True], "late": [False, False]}  # at the rungs below the reference


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    results = tmp_path_factory.mktemp("figure") / "results"
    for k, (sweep, gaps) in enumerate(GAPS.items()):
        planted.write_decision(results, sweep, gaps, RUNGS, noise=0.005, rng_seed=k)
    return results


@pytest.fixture(scope="module")
def result(store):
    return decision_accuracy(decision_runs(store, list(GAPS), "final_val_loss"))


def test_the_png_draws_each_rungs_accuracy_and_each_decisions_picks(result):
    plot = draw(result)
    top, bottom = plot.figure.axes
    accuracy, *_, target = top.lines  # the points (with their error bars' caps), then the target
    shares = [rung.compute / RUNGS[-1].compute for rung in RUNGS[:-1]]
    assert np.allclose(accuracy.get_xdata().astype(float), shares)
    assert np.allclose(accuracy.get_ydata().astype(float), [1 / 3, 2 / 3])
    assert list(target.get_ydata()) == [0.9, 0.9]
    squares = [(c.get_offsets()[0], to_hex(c.get_facecolor()[0], keep_alpha=False))
               for c in bottom.collections if len(c.get_offsets())]
    expected = {(r, y): to_hex(COLORS[1 if agree else -1])
                for y, sweep in enumerate(GAPS) for r, agree in enumerate(AGREE[sweep])}
    expected |= {(len(RUNGS) - 1, y): to_hex(COLORS[1]) for y in range(len(GAPS))}  # the reference column
    assert {(int(x), int(y)): color for (x, y), color in squares} == expected
    assert [t.get_text() for t in bottom.get_yticklabels()] == [f"{s}: second vs first → second" for s in GAPS]
    assert plot.png().startswith(b"\x89PNG")


def test_the_plotly_figure_has_the_same_accuracy_and_picks(result):
    figure = decisions_figure(result)
    accuracy = figure["data"][0]
    assert accuracy["y"] == pytest.approx([1 / 3, 2 / 3]) and figure["layout"]["xaxis"]["type"] == "log"
    opposite = next(trace for trace in figure["data"] if trace["name"] == "the opposite")
    flipped = {(x, y.split(":")[0]) for x, y in zip(opposite["x"], opposite["y"])}
    assert flipped == {(RUNGS[r].label, sweep) for sweep in GAPS for r, agree in enumerate(AGREE[sweep]) if not agree}


def test_plot_pools_sweeps_with_also_and_refuses_it_for_another_figure(store, tmp_path, capsys):
    out = tmp_path / "decisions.svg"
    argv = ["plot", "decisions", "steady", "--also", "flip1", "--also", "late", "--results", str(store), "--out",
            str(out)]
    assert main(argv) == 0 and out.read_bytes().startswith(b"<?xml")
    assert main(["plot", "lr", "steady", "--also", "flip1", "--results", str(store), "--out", str(out)]) == 2
    assert capsys.readouterr().err.endswith("--also applies to the decisions figure only, not 'lr'.\n")


@pytest.mark.slow
def test_a_ladders_report_draws_the_figure_from_every_run(store, tmp_path):
    page = write_report(store, "flip1", tmp_path / "report.html").read_text()
    section = page[page.index('<h2 id="ladder">'):page.index("<h2>Figures</h2>")]
    assert '<div class="plot" id="plot-decisions"></div>' in section
    found = json.loads(unescape(re.search(r'<script id="decisions-data" type="application/json">(.*?)</script>',
                                          section, re.S).group(1)))
    assert found["data"][0]["y"] == [0.0, 1.0]  # flip1 alone: wrong at the first rung, right at the second
