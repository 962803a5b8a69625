import db
import synthetic
from analysis.reading.frames import INITIAL_FROM_STEP_0, INITIAL_FROM_TRAIN_LOSS, curves, initial_losses, load_sweep


def test_curves_bucket_long_histories_and_skip_unfinished_values(tmp_path):
    synthetic.write_run(tmp_path, "long", sweep="s", arm="a", seed=0, lr=1e-3, final=3.0, steps=1000)
    synthetic.write_run(tmp_path, "gone", sweep="s", arm="a", seed=1, lr=1e-3, final=3.0, steps=100, diverge_at=50)
    sweep = load_sweep(tmp_path, "s")
    frame, sql = curves(sweep, "train_loss", points=100)
    assert set(frame["run_id"]) == {"long"}  # completed runs only, by default
    assert len(frame) == 100 and frame["step"].diff().dropna().eq(10).all()
    assert sql.startswith("WITH sweep_runs AS (")
    diverged, _ = curves(sweep, "train_loss", points=100, statuses=("diverged",))
    assert diverged["value"].notna().all() and diverged["step"].max() == 40  # the NaN loss at step 50 is left out


def test_initial_loss_is_the_step_0_metric_else_the_first_logged_training_loss(tmp_path):
    # with log_every=5 the first logged training loss is at step 0 here, but ℓ₀ is the step-0 metric when there is one
    synthetic.write_run(tmp_path, "new", sweep="s", arm="a", seed=0, lr=1e-3, final=3.0, steps=10, log_every=5,
                        initial_loss=8.5)
    synthetic.write_run(tmp_path, "old", sweep="s", arm="a", seed=1, lr=1e-3, final=3.0, steps=10)
    initial, _ = initial_losses(load_sweep(tmp_path, "s"))
    assert initial["initial_loss"].to_dict() == {"new": 8.5, "old": synthetic.INITIAL_LOSS + 0.02}
    assert initial["initial_from"].to_dict() == {"new": INITIAL_FROM_STEP_0, "old": INITIAL_FROM_TRAIN_LOSS}


def test_the_shown_sql_gives_what_the_materialized_table_gave(tmp_path):
    for seed in range(2):
        synthetic.write_run(tmp_path, f"r{seed}", sweep="s", arm="a", seed=seed, lr=1e-3, final=3.0 + seed, steps=10)
    synthetic.write_run(tmp_path, "other", sweep="t", arm="a", seed=0, lr=1e-3, final=2.0, steps=10)
    sweep = load_sweep(tmp_path, "s")
    frame, text = sweep.frame("SELECT run_id, final_val_loss FROM sweep_runs ORDER BY run_id")
    assert frame.equals(db.connect(tmp_path).sql(text).df())  # a fresh connection, no temp table
    assert frame["run_id"].tolist() == ["r0", "r1"]
