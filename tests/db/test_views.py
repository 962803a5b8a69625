import subprocess
import sys

import pytest

import db
from db.views import RUNS_LEADING, RUNS_TRAILING


def test_runs_has_identity_config_columns_and_val_loss_summary(results, write_run):
    write_run(results, "r1", val_losses=(3.0, 2.5, 2.7), seed=1, config={"model": {"d_model": 64}, "seed": 9},
              params=1000, flops_per_token=6e3)
    row = db.connect(results).execute(
        'SELECT run_id, sweep, arm, seed, status, "model.d_model", "config.seed", params, flops_per_token, '
        "final_val_loss, best_val_loss, final_train_loss, last_step, n_segments FROM runs"
    ).fetchone()
    assert row == ("r1", "s", "a", 1, "completed", 64, 9, 1000, 6e3, 2.7, 2.5, 4.0 - 29 / 100, 29, 1)


def test_config_switches_of_different_runs_union_into_columns(results, write_run):
    write_run(results, "r1", config={"qk_norm": "rmsnorm"})
    write_run(results, "r2", config={"attn_softcap": 30.0})
    con = db.connect(results)
    assert con.sql("SELECT * FROM runs").columns == [*RUNS_LEADING, "attn_softcap", "qk_norm", *RUNS_TRAILING]
    rows = con.execute("SELECT run_id, qk_norm, attn_softcap FROM runs ORDER BY run_id").fetchall()
    assert rows == [("r1", "rmsnorm", None), ("r2", None, 30.0)]


def test_views_exist_with_their_columns_before_any_row_is_logged(results):
    db.RunWriter.open(results, "fresh")
    con = db.connect(results)
    for view, columns in {
        "metrics": ["run_id", "step", "name", "value"],
        "layer_metrics": ["run_id", "step", "layer", "head", "name", "value"],
        "events": ["run_id", "step", "kind", "value", "detail", "logged_at"],
    }.items():
        assert con.sql(f"SELECT * FROM {view}").columns == columns
        assert con.execute(f"SELECT count(*) FROM {view}").fetchone() == (0,)
    assert con.execute("SELECT status, last_step FROM runs").fetchone() == ("running", None)


@pytest.mark.slow
def test_unclosed_run_whose_local_writer_died_shows_as_crashed(results):
    script = f"import db; w = db.RunWriter.open({str(results)!r}, 'dead'); w.log_metrics(0, {{'loss': 1.0}}); w.flush()"
    subprocess.run([sys.executable, "-c", script], check=True)
    db.RunWriter.open(results, "alive")  # this process is alive: still running
    rows = db.connect(results).execute("SELECT run_id, status FROM runs ORDER BY run_id").fetchall()
    assert rows == [("alive", "running"), ("dead", "crashed")]


def test_resumed_run_shows_each_step_once_from_the_latest_segment(results):
    first = db.RunWriter.open(results, "r1", sweep="s", config={"lr": 0.1})
    for step in range(10):
        first.log_metrics(step, {"train_loss": 10.0 + step})
        first.log_layer_metrics(step, "rms", [1.0, 1.0])
    first.log_event(8, "loss_spike", 1.0)
    first.flush()  # killed after step 9; the last checkpoint was at step 6
    second = db.RunWriter.open(results, "r1", resume=True, resume_from_step=6)
    for step in range(6, 12):
        second.log_metrics(step, {"train_loss": 20.0 + step})
        second.log_layer_metrics(step, "rms", [2.0, 2.0])
    second.close()
    con = db.connect(results)
    rows = con.execute("SELECT step, value FROM metrics ORDER BY step").fetchall()
    assert rows == [(s, 10.0 + s) for s in range(6)] + [(s, 20.0 + s) for s in range(6, 12)]
    assert con.execute("SELECT count(*), count(DISTINCT (step, layer)) FROM layer_metrics").fetchone() == (24, 24)
    assert con.execute("SELECT count(*) FROM events").fetchone() == (0,)
    assert con.execute("SELECT sweep, lr, status, n_segments, last_step, final_train_loss FROM runs").fetchone() == (
        "s", 0.1, "completed", 2, 11, 31.0
    )


def test_a_failed_segment_followed_by_a_running_resume_is_running(results, write_run):
    write_run(results, "r1", status="failed")
    db.RunWriter.open(results, "r1", resume=True, resume_from_step=10)
    assert db.connect(results).execute("SELECT status FROM runs").fetchone() == ("running",)
