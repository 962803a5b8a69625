"""Per-arm Optuna searches through real workers and a real SQLite Optuna storage: no duplicated trial, every
trial a run visible in SQL, a diverged trial valued at its initial loss, a SIGKILLed trial failed by its
heartbeat and retried (resuming its run), pruned trials stored as `pruned`, and bad storage URLs refused."""

import os
import signal

import pytest

import db
from experiments import expand
from experiments.declare.load import load_ablation
from experiments.search.runner import default_storage, open_study, storage
from experiments.workers.claims import current_claim

from .conftest import start_sweep, wait_for

SEARCH = '''
from experiments import Ablation, grid, LogUniform

ablation = Ablation(
    "search", "Which LR is best?", base="tiny", tune={{"lr": LogUniform(1e-3, 1e-2)}}, trials={trials},
    sampler="random", pruner="none",
    train=dict(steps={steps}, batch_size=4, seq_len=32, warmup_steps=2, val_every={steps}, val_seqs=4, probe_every=10,
               probe_seqs=2, checkpoint_every=5, grad_clip=None, log_every={log_every}),
    data=dict(source={source!r}, cache_dir={cache_dir!r}, val_tokens={val_tokens}),
)
'''


@pytest.fixture
def search_file(tmp_path, train_data_cfg):
    def write(trials=4, steps=8, log_every=1):
        path = tmp_path / "search.py"
        path.write_text(SEARCH.format(trials=trials, steps=steps, log_every=log_every, source=train_data_cfg.source,
                                      cache_dir=train_data_cfg.cache_dir, val_tokens=train_data_cfg.val_tokens))
        return path
    return write


def the_study(path, results, stale_after=6.0):
    (study,) = expand(load_ablation(str(path))[0], overrides={"vocab_size": 512}).studies
    return open_study(study, "search", storage(default_storage(results), 1, stale_after), "test")


def step_one_loss(path, results_dir, params):
    """The oracle for a diverged trial's value: step 1's training loss of the same configs trained apart, one
    step, logged every step (the initial weights meet step 1's batch whatever the LR and the step count)."""
    from harness.data import prepare
    from harness.train.run import RunSpec, train_run

    (study,) = expand(load_ablation(str(path))[0], overrides={"vocab_size": 512}).studies
    model, train, data = study.configs(params)
    train_run(RunSpec(model, train.replace(steps=1, log_every=1), data, results_dir, "oracle"),
              prepare(data, model.vocab_size), progress=False)
    ((loss,),) = db.connect(results_dir).execute(
        "SELECT value FROM metrics WHERE run_id = 'oracle' AND name = 'train_loss' AND step = 1").fetchall()
    return loss


@pytest.mark.slow
def test_two_workers_share_a_study_without_duplicates_and_a_diverged_trial_is_valued_at_its_initial_loss(tmp_path,
                                                                                                         search_file):
    # log_every=5: the first logged loss is the diverged step's, not the loss at initialization.
    path, results = search_file(trials=4, log_every=5), tmp_path / "results"
    results.mkdir()
    the_study(path, results).enqueue_trial({"lr": 50.0})  # first trial: an LR that diverges
    sweep = start_sweep(path, results, "--workers", "2", "--set", "vocab_size=512")
    _, err = sweep.communicate()
    assert sweep.returncode == 0, err
    trials = [t for t in the_study(path, results).trials if t.state.name == "COMPLETE"]
    assert len(trials) == 4 and len({t.number for t in trials}) == 4
    assert len({t.params["lr"] for t in trials}) == 4  # each worker samples its own stream: no repeated proposal
    con = db.connect(results)
    rows = con.execute("SELECT c.trial, c.lr, r.status, r.run_id FROM sweep_cells c JOIN runs r USING (run_id) "
                       "WHERE c.sweep = 'search' ORDER BY c.trial").fetchall()
    assert [trial for trial, *_ in rows] == [t.number for t in sorted(trials, key=lambda t: t.number)]
    (diverged,) = [row for row in rows if row[1] == 50.0]
    assert diverged[2] == "diverged"
    (first_logged,) = con.execute("SELECT value FROM metrics WHERE run_id = ? AND name = 'train_loss' ORDER BY step "
                                  "LIMIT 1",
                                  [diverged[3]]).fetchone()
    oracle = step_one_loss(path, tmp_path / "oracle", {"lr": 50.0})
    value = next(t.value for t in trials if t.params["lr"] == 50.0)
    assert value == pytest.approx(oracle, rel=1e-5) and first_logged != pytest.approx(oracle, rel=1e-3)
    best = min((t for t in trials if t.params["lr"] != 50.0), key=lambda t: t.value)
    assert (con.execute("SELECT trial, final_val_loss FROM best_trials").fetchone()
            == (best.number, pytest.approx(best.value)))


@pytest.mark.slow
def test_a_sigkilled_trial_is_failed_by_its_heartbeat_and_retried_from_its_checkpoint(tmp_path, search_file):
    path, results = search_file(trials=2, steps=150), tmp_path / "results"
    sweep = start_sweep(path, results, "--workers", "1", "--stale-after", "6", "--heartbeat-every", "1", "--set",
                        "vocab_size=512")

    def trial_past_its_first_checkpoint():
        """The run id of a trial being trained that has written a checkpoint (every 5 steps), else None."""
        claims = results / "claims"
        for run in claims.iterdir() if claims.is_dir() else []:
            claim = current_claim(results, run.name)
            if claim and not claim.released and (results / "checkpoints" / run.name / "last.ckpt").exists():
                return run.name
        return None

    wait_for(lambda: trial_past_its_first_checkpoint() is not None, every=0.05)
    run_id = trial_past_its_first_checkpoint()
    os.kill(current_claim(results, run_id).pid, signal.SIGKILL)
    _, err = sweep.communicate()
    assert sweep.returncode == 0, err
    study = the_study(path, results)
    states = [t.state.name for t in study.trials]
    assert states.count("FAIL") == 1 and states.count("COMPLETE") == 2
    failed = next(t for t in study.trials if t.state.name == "FAIL")
    retry = next(t for t in study.trials
                 if t.state.name == "COMPLETE" and t.system_attrs.get("failed_trial") == failed.number)
    assert retry.params == failed.params
    state = db.run_state(results, run_id)
    assert len(state.segments) == 2 and state.result == "completed"  # the retry resumed the killed trial's run
    steps = [s for (s,) in db.connect(results).execute(
        "SELECT step FROM metrics WHERE run_id = ? AND name = 'train_loss' ORDER BY step", [run_id]).fetchall()]
    assert steps == list(range(1, 151))


@pytest.mark.parametrize("extra, message", [
    (["--optuna-storage", "postgresql://nobody@127.0.0.1:1/none"],
     "--optuna-storage 'postgresql://nobody@127.0.0.1:1/none' cannot be reached"),
    (["--optuna-storage", "notadb://x"], "cannot be reached"),
])
def test_an_unreachable_storage_is_refused_before_any_compute(tmp_path, search_file, capsys, extra, message):
    from cli.main import main

    results = tmp_path / "results"
    assert main(["sweep", str(search_file()), "--results", str(results), "--no-report", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("harness sweep: error:") and len(err.strip().splitlines()) == 1
    assert not results.exists()


def test_tune_on_an_unknown_field_is_refused(tmp_path, capsys):
    from cli.main import main

    path = tmp_path / "bad_tune.py"
    path.write_text("from experiments import Ablation, LogUniform\n"
                    "ablation = Ablation('bad', 'q?', base='tiny', tune={'lrr': LogUniform(1e-4, 1e-2)})\n")
    assert main(["sweep", str(path), "--results", str(tmp_path / "r")]) == 2
    assert "tune= names no field 'lrr'; did you mean 'lr'?" in capsys.readouterr().err
