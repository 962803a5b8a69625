"""`db.write_sweep` plans and the `sweep_cells` / `sweeps` views, including one run shared by two sweeps."""

import json

import pytest

import db


def _cells(*specs):
    return [{"arm": arm, "lr": lr, "seed": seed, "run_id": run_id, "arm_values": json.dumps({"qk": arm})}
            for arm, lr, seed, run_id in specs]


def test_plan_cells_take_their_runs_status_and_missing_runs_are_pending(results, write_run):
    write_run(results, "k1", sweep="qk", arm="none")
    write_run(results, "k2", sweep="qk", arm="rms", status="diverged")
    db.write_sweep(results, "qk", {"question": "does QK-norm help?", "baseline": "none", "axes": ["qk"]},
                   _cells(("none", 1e-3, 0, "k1"), ("rms", 1e-3, 0, "k2"), ("rms", 1e-3, 1, "k3")))
    con = db.connect(results)
    rows = con.execute("SELECT arm, lr, seed, run_id, cell, status FROM sweep_cells ORDER BY cell").fetchall()
    assert rows == [("none", 1e-3, 0, "k1", 0, "completed"), ("rms", 1e-3, 0, "k2", 1, "diverged"),
                    ("rms", 1e-3, 1, "k3", 2, "pending")]
    sweep = con.execute("SELECT sweep, question, baseline, axes, n_cells, completed, diverged, failed, running, "
                        "pending FROM sweeps").fetchone()
    assert sweep == ("qk", "does QK-norm help?", "none", '["qk"]', 3, 1, 1, 0, 0, 1)


def test_one_run_in_two_sweeps_shows_in_both(results, write_run):
    write_run(results, "shared", sweep=None, arm=None)
    db.write_sweep(results, "a", {}, _cells(("base", 1e-3, 0, "shared")))
    db.write_sweep(results, "b", {}, _cells(("other-name", 3e-3, 0, "shared")))
    con = db.connect(results)
    rows = con.execute("SELECT c.sweep, c.arm, r.status FROM sweep_cells c JOIN runs r USING (run_id) "
                       "ORDER BY c.sweep").fetchall()
    assert rows == [("a", "base", "completed"), ("b", "other-name", "completed")]


def test_runs_labelled_with_a_sweep_but_no_plan_form_an_implicit_sweep(results, write_run):
    write_run(results, "w1", sweep="hand", arm="x", seed=3, config={"lr": 2e-3})
    write_run(results, "w2", sweep="planned", arm="y", seed=0, config={"lr": 1e-3})
    db.write_sweep(results, "planned", {}, _cells(("z", 1e-3, 0, "other")))  # w2 is not in the plan: not a cell
    con = db.connect(results)
    rows = con.execute("SELECT sweep, arm, lr, seed, run_id, status FROM sweep_cells ORDER BY sweep").fetchall()
    assert rows == [("hand", "x", 2e-3, 3, "w1", "completed"), ("planned", "z", 1e-3, 0, "other", "pending")]
    assert (con.execute("SELECT question, baseline, axes FROM sweeps WHERE sweep = 'hand'").fetchone()
            == (None, None, "[]"))


def test_a_new_launch_replaces_the_plan(results, write_run):
    write_run(results, "k1")
    db.write_sweep(results, "s", {}, _cells(("a", 1e-3, 0, "k1"), ("a", 1e-3, 1, "k2")))
    db.write_sweep(results, "s", {}, _cells(("a", 1e-3, 0, "k1")))
    assert db.connect(results).execute("SELECT count(*) FROM sweep_cells WHERE sweep = 's'").fetchone() == (1,)
    assert db.read_plan(results, "s").column("run_id").to_pylist() == ["k1"]


def test_bad_sweep_names_and_columns_are_refused(results):
    with pytest.raises(db.DbError, match="sweep='../x' is invalid"):
        db.write_sweep(results, "../x", {}, [])
    with pytest.raises(db.DbError, match="unknown column"):
        db.write_sweep(results, "s", {}, [{"arm": "a", "colour": "red"}])
    with pytest.raises(db.DbError, match="no sweep 'nope'"):
        db.read_plan(results, "nope")


def test_run_state_counts_failures_and_sees_the_latest_result(results):
    assert not db.run_state(results, "r").exists
    db.RunWriter.open(results, "r").close("failed")
    db.RunWriter.open(results, "r", resume=True, resume_from_step=0).close("interrupted")
    state = db.run_state(results, "r")
    assert (state.segments, state.failures, state.last_status, state.result) == ((0, 1), 1, "interrupted", None)
    db.RunWriter.open(results, "r", resume=True, resume_from_step=0).close("diverged", diverged_at_step=3)
    assert db.run_state(results, "r").result == "diverged"
