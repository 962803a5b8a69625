"""Ladders that must not be extrapolated (analysis/ladder/degenerate.py), planted through the real db.RunWriter:
three rungs, and a pure power law whose irreducible loss E runs to 0 — each refused in one line by compare's
table, `harness plot ladder` and the report, while a well-posed ladder is extrapolated; and a ladder's answer
compares arms at the largest rung, not rungs with each other."""

import subprocess
import sys

import numpy as np
import pytest

import ladder_simulation as simulation
import ladder_synthetic as synthetic
from analysis.ladder.analyse import analyse_ladder
from analysis.reading.frames import load_sweep
from analysis.summary import analyse

POWER_LAW = {"base": (0.0, 60.0, 0.14), "steeper": (0.0, 160.0, 0.16)}  # E = 0: nothing bends towards a floor


def ladder(tmp_path, curves, rungs, seeds=3):
    synthetic.write_ladder(tmp_path, "lad", curves, synthetic.chinchilla_rungs(rungs), seeds=seeds, noise=0.003)
    return load_sweep(tmp_path, "lad")


def analysed(sweep, rungs):
    return analyse_ladder(sweep, "final_val_loss", "base@" + synthetic.chinchilla_rungs(rungs)[-1].label, axes=())


@pytest.mark.slow
def test_three_rungs_are_fitted_but_never_extrapolated(tmp_path):
    table = analysed(ladder(tmp_path, simulation.CURVES, 3), 3).table
    for row in table.to_dict("records"):
        assert row["note"].startswith("no extrapolation: 3 rungs determine the 3 parameters")
        assert np.isfinite(row["E"]) and np.isnan(row["predicted"]) and np.isnan(row["gap"])


@pytest.mark.slow
def test_a_floorless_power_law_puts_e_at_its_bound_and_is_refused(tmp_path):
    result = analysed(ladder(tmp_path, POWER_LAW, 5), 5)
    base, steeper = result.table.to_dict("records")
    smallest = np.nanmin(result.data.loss[0])
    assert base["E"] < 0.01 * smallest  # the planted truth: E = 0
    assert base["note"].startswith("no extrapolation: the irreducible loss E ran to its bound")
    assert np.isnan(base["predicted"]) and np.isnan(steeper["gap"])


def test_a_well_posed_ladder_is_extrapolated(tmp_path):
    base, steeper = analysed(ladder(tmp_path, simulation.CURVES, 5, seeds=4), 5).table.to_dict("records")
    assert not base["note"] and np.isfinite(base["predicted"]) and np.isfinite(steeper["gap"])


@pytest.mark.slow
def test_plot_and_report_say_no_extrapolation_and_the_answer_compares_arms_at_the_largest_rung(tmp_path):
    sweep = ladder(tmp_path, simulation.CURVES, 3)
    out = tmp_path / "ladder.png"
    plotted = subprocess.run([sys.executable, "-m", "cli.main", "plot", "ladder", "lad", "--results", str(tmp_path),
                              "--out", str(out)], capture_output=True, text=True)
    assert plotted.returncode == 0 and out.is_file(), plotted.stderr
    assert [line for line in plotted.stderr.splitlines() if "no extrapolation: 3 rungs" in line] == [
        f"harness plot: {arm}: no extrapolation: 3 rungs determine the 3 parameters (E, A, α) exactly, so nothing "
        "tests that the points lie on such a curve; extrapolation needs 4 rungs or more" for arm in ("base", "steeper")]
    analysis = analyse(sweep, baseline="base@" + synthetic.chinchilla_rungs(3)[-1].label)
    assert [line.arm for line in analysis.headlines] == ["steeper"]  # arms, not rungs
    assert analysis.headline_rung == synthetic.chinchilla_rungs(3)[-1].label
    from analysis.report.answer import answer

    html = answer(analysis)
    assert f"At the largest rung ({analysis.headline_rung})" in html
    assert "steeper</b>: no extrapolation: 3 rungs determine" in html
