import pytest

import db
import synthetic
from analysis.errors import AnalysisError
from analysis.reading.frames import load_sweep


@pytest.fixture
def planned(tmp_path):
    """A planned sweep of 4 cells: 2 finished, 1 running, 1 not started; plus an adopted run from another sweep."""
    synthetic.write_run(tmp_path, "c0", sweep="qk", arm="base", seed=0, lr=1e-3, final=3.0, steps=12)
    synthetic.write_run(tmp_path, "c1", sweep="qk", arm="qk", seed=0, lr=1e-3, final=2.9, steps=12, diverge_at=6)
    synthetic.write_run(tmp_path, "c2", sweep="qk", arm="base", seed=1, lr=1e-3, final=3.0, steps=12, status=None)
    synthetic.write_run(tmp_path, "old", sweep="earlier", arm="x", seed=1, lr=1e-3, final=2.95, steps=12)
    cells = [
        {"arm": "base", "lr": 1e-3, "seed": 0, "run_id": "c0"}, {"arm": "qk", "lr": 1e-3, "seed": 0, "run_id": "c1"},
        {"arm": "base", "lr": 1e-3, "seed": 1, "run_id": "c2"}, {"arm": "qk", "lr": 1e-3, "seed": 1, "run_id": "old"},
        {"arm": "qk", "lr": 1e-3, "seed": 2, "run_id": "not-yet"},
    ]
    db.write_sweep(tmp_path, "qk", {"question": "Does QK-norm help?", "baseline": "base", "axes": ["qk_norm"]}, cells)
    return tmp_path


def test_progress_counts_cells_and_says_partial_while_running(planned):
    info = load_sweep(planned, "qk").info
    assert info.running and info.n_cells == 5 and info.n_done == 3
    assert info.progress() == "3 of 5 cells; partial"
    assert (info.question, info.baseline, info.axes) == ("Does QK-norm help?", "base", ["qk_norm"])


def test_membership_comes_from_the_plan_with_the_cells_labels(planned):
    runs = load_sweep(planned, "qk").runs.set_index("run_id")
    assert sorted(runs.index) == ["c0", "c1", "c2", "old"]  # the pending cell has no run yet
    # adopted: the plan's labels, not the run's
    assert runs.at["old", "arm"] == "qk" and runs.at["old", "sweep"] == "qk"


def test_finished_sweep_is_not_running(tmp_path):
    synthetic.write_run(tmp_path, "r", sweep="done", arm="a", seed=0, lr=1e-3, final=3.0, steps=12)
    info = load_sweep(tmp_path, "done").info
    assert not info.running and info.progress() == "1 of 1 cells"


def test_unknown_sweep_names_the_closest_one(planned):
    with pytest.raises(AnalysisError, match="no sweep named 'kq' in the results store; did you mean 'qk'"):
        load_sweep(planned, "kq")


def test_missing_store_is_an_analysis_error(tmp_path):
    with pytest.raises(AnalysisError, match="no results directory"):
        load_sweep(tmp_path / "nowhere", "qk")


def test_failed_cells_are_reported_not_waited_for(tmp_path):
    synthetic.write_run(tmp_path, "ok", sweep="mixed", arm="a", seed=0, lr=1e-3, final=3.0, steps=12)
    synthetic.write_run(tmp_path, "bad", sweep="mixed", arm="a", seed=1, lr=1e-3, final=3.0, steps=12, status="failed")
    info = load_sweep(tmp_path, "mixed").info
    assert not info.running and info.progress() == "1 of 2 cells (1 failed)"
