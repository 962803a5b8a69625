"""A search trial whose worker is paused past --stale-after: its Optuna trial is failed as stale and retried,
the retry takes the paused worker's cell over and finishes it, and the woken worker writes nothing more,
reuses the result and goes on; every run has one result and the study its trial count."""

import pytest

import db

from .conftest import start_sweep, wait_for
from .stalls import FAST, assert_final_checkpoint_stands, holder_pid, raw_results, stall_until_taken_over, worker_logs
from .test_search import search_file, the_study  # noqa: F401  (search_file is a fixture)


@pytest.mark.slow
def test_a_paused_trial_is_taken_over_and_finished_once(tmp_path, search_file):  # noqa: F811
    path, results = search_file(trials=3, steps=60), tmp_path / "results"
    sweep = start_sweep(path, results, "--workers", "2", *FAST, "--set", "vocab_size=512")
    caught = []

    def trial_past_a_checkpoint():
        claims = results / "claims"
        for run in claims.iterdir() if claims.is_dir() else []:
            pid = holder_pid(results, run.name)
            if pid is not None and (results / "checkpoints" / run.name / "last.ckpt").exists():
                caught.append((run.name, pid))
                return True
        return False

    wait_for(trial_past_a_checkpoint, every=0.01)
    run_id, pid = caught[0]
    stall_until_taken_over(results, run_id, pid)
    _, err = sweep.communicate()
    assert sweep.returncode == 0, err
    assert "starting a new one" not in err
    assert "lost the cell to another worker" in worker_logs(results, "search")
    study = the_study(path, results, stale_after=2.5)
    assert sum(t.state.name == "COMPLETE" for t in study.trials) == 3
    con = db.connect(results)
    runs = [r for (r,) in con.execute("SELECT run_id FROM sweep_cells WHERE sweep = 'search'").fetchall()]
    for run in set(runs):
        assert raw_results(results, run) == 1 and db.run_state(results, run).result == "completed"
        assert_final_checkpoint_stands(results, run)
    steps = [s for (s,) in con.execute("SELECT step FROM metrics WHERE run_id = ? AND name = 'train_loss' "
                                       "ORDER BY step", [run_id]).fetchall()]
    assert steps == list(range(1, 61))
