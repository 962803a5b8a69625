"""Arm labels in `harness compare`, `harness summary` and `harness plot`: tables show the label the plan gives an
arm (its name where it gives none), and --baseline takes either."""

import json
import sys
from pathlib import Path

import pytest

import db
from cli.main import main

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402

LABELS = {"base": "SwiGLU", "mlp=gelu": None}


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("labels") / "results"
    finals = synthetic.write_planted(path, "mlp", {"base": (0.0, 0.002, 3), "mlp=gelu": (0.05, 0.002, 3)}, steps=12)
    cells = [{"arm": arm, "arm_label": LABELS[arm], "lr": None, "seed": seed,
              "run_id": f"mlp-{list(LABELS).index(arm)}-None-{seed}"}
             for arm, _, seed in finals]
    db.write_sweep(path, "mlp", {"baseline": "base"}, cells)
    return path


def test_compare_shows_labels_and_takes_one_as_baseline(results, capsys):
    assert main(["compare", "mlp", "--results", str(results), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(row["arm"], row["verdict"]) for row in rows] == [("SwiGLU", "baseline"), ("mlp=gelu", "worse")]
    assert main(["compare", "mlp", "--results", str(results), "--format", "json", "--baseline", "mlp=gelu"]) == 0
    assert [row["verdict"] for row in json.loads(capsys.readouterr().out)] == ["baseline", "better"]
    assert main(["compare", "mlp", "--results", str(results), "--format", "json", "--baseline", "SwiGLU"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["verdict"] == "baseline"


def test_summary_shows_labels(results, capsys):
    assert main(["summary", "mlp", "--results", str(results), "--format", "json"]) == 0
    assert [row["arm"] for row in json.loads(capsys.readouterr().out)] == ["SwiGLU", "mlp=gelu"]


def test_plot_legends_use_labels(results, tmp_path):
    out = tmp_path / "curves.svg"
    assert main(["plot", "curves", "mlp", "--results", str(results), "--out", str(out)]) == 0
    assert "SwiGLU" in out.read_text()
