"""`Ablation(tune=..., confirm_seeds=N)` through real workers: once an arm's study is done, its best trial's
configuration is trained on N fresh seeds as ordinary claimed cells, exactly once (two workers compute the same
cells), listed in `sweep_cells` with `confirms`; the sweep counts them, so it exits 0 only when they are trained;
a rerun trains nothing; `harness compare` judges each arm on them. Bad values are refused before any compute."""

import json

import pytest

import db
from errors import ConfigError
from experiments import Ablation, LogUniform, grid
from experiments.search.study import CONFIRM_SEED_STRIDE
from experiments.workers.progress import ProgressReader, stored_cells

from .conftest import finished_segments, start_sweep

SEARCH = '''
from experiments import Ablation, grid, LogUniform

ablation = Ablation(
    "confirm", "With each arm's LR tuned and confirmed, does QK-norm help?", base="tiny",
    grid=grid(qk_norm=["none", "rmsnorm"]), tune={{"lr": LogUniform(1e-3, 1e-2)}}, trials=2, confirm_seeds={confirm},
    sampler="random", pruner="none",
    train=dict(steps=8, batch_size=4, seq_len=32, warmup_steps=2, val_every=8, val_seqs=4, probe_every=10,
               probe_seqs=2, checkpoint_every=100),
    data=dict(source={source!r}, cache_dir={cache_dir!r}, val_tokens={val_tokens}),
)
'''
FRESH = [CONFIRM_SEED_STRIDE, 2 * CONFIRM_SEED_STRIDE]  # the study's seed 0 plus (i + 1) strides


@pytest.fixture
def search_file(tmp_path, train_data_cfg):
    def write(confirm):
        path = tmp_path / "confirm.py"
        path.write_text(SEARCH.format(confirm=confirm, source=train_data_cfg.source, cache_dir=train_data_cfg.cache_dir,
                                      val_tokens=train_data_cfg.val_tokens))
        return path
    return write


def _sweep(path, results):
    sweep = start_sweep(path, results, "--workers", "2")
    _, err = sweep.communicate()
    return sweep.returncode, err


def _segments(results):
    con = db.connect(results)
    return {run_id: len(db.run_state(results, run_id).segments)
            for (run_id,) in con.execute("SELECT run_id FROM sweep_cells WHERE sweep = 'confirm'").fetchall()}


def _confirmations(results):
    return db.connect(results).execute(
        "SELECT arm, seed, trial, confirms, lr, run_id, status FROM sweep_cells "
        "WHERE sweep = 'confirm' AND confirms IS NOT NULL ORDER BY arm, seed").fetchall()


@pytest.mark.slow
def test_each_arms_chosen_configuration_is_trained_once_on_fresh_seeds_and_compared_on_them(tmp_path, search_file,
                                                                                            capsys):
    path, results = search_file(confirm=2), tmp_path / "results"
    code, err = _sweep(path, results)
    assert code == 0, err
    con = db.connect(results)
    # The oracle for the chosen trial: the store's best completed trial of each arm (the best_trials view).
    best = {arm: (trial, run_id)
            for arm, trial, run_id in con.execute("SELECT arm, trial, run_id FROM best_trials").fetchall()}
    trial_lr = dict(con.execute("SELECT run_id, lr FROM sweep_cells WHERE trial IS NOT NULL").fetchall())
    rows = _confirmations(results)
    assert ([(arm, seed) for arm, seed, *_ in rows]
            == [(arm, seed) for arm in ("base", "qk_norm=rmsnorm") for seed in FRESH])
    for arm, seed, trial, confirms, lr, run_id, status in rows:
        assert trial is None and confirms == best[arm][0] and lr == trial_lr[best[arm][1]] and status == "completed"
        assert finished_segments(results, run_id) == ["completed"]  # one result: two workers, trained once
        assert len(db.run_state(results, run_id).segments) == 1
    assert con.execute("SELECT n_cells, completed FROM sweeps WHERE sweep = 'confirm'").fetchone() == (8, 8)
    assert ProgressReader(results, "confirm", retries=1).read().total == 8  # 2 studies × (2 trials + 2 confirmations)

    before = _segments(results)
    code, err = _sweep(path, results)
    assert code == 0, err
    assert _segments(results) == before  # the rerun trained nothing

    from cli.main import main

    assert main(["compare", "confirm", "--results", str(results), "--format", "json"]) == 0
    compared = {row["arm"]: row for row in json.loads(capsys.readouterr().out)}
    assert compared["qk_norm=rmsnorm"]["selection"] == "confirmed on 2 fresh seeds"
    assert (compared["qk_norm=rmsnorm"]["seeds"], compared["qk_norm=rmsnorm"]["n_pairs"]) == (2, 2)
    finals = dict(con.execute("SELECT run_id, final_val_loss FROM runs").fetchall())
    confirmed = [finals[run_id] for arm, *_, run_id, _ in rows if arm == "qk_norm=rmsnorm"]
    assert compared["qk_norm=rmsnorm"]["mean"] == pytest.approx(sum(confirmed) / 2)


@pytest.mark.slow
def test_adding_confirm_seeds_to_a_finished_search_trains_only_the_confirmations(tmp_path, search_file):
    """A search whose confirmations are missing (here: asked for after it finished; likewise a crash before
    they were recorded) is resumed by the same command: the trials are kept, the confirmations trained."""
    results = tmp_path / "results"
    code, err = _sweep(search_file(confirm=0), results)
    assert code == 0, err
    trials = _segments(results)
    assert len(trials) == 4 and not _confirmations(results)
    code, err = _sweep(search_file(confirm=1), results)
    assert code == 0, err
    after = _segments(results)
    assert {run_id: after[run_id] for run_id in trials} == trials
    assert ([(arm, seed) for arm, seed, *_ in _confirmations(results)]
            == [("base", FRESH[0]), ("qk_norm=rmsnorm", FRESH[0])])


@pytest.mark.parametrize("extra, message", [
    (dict(confirm_seeds=2), "confirm_seeds=2 needs tune=: it reruns a search's chosen configuration on fresh seeds"),
    (dict(tune={"lr": LogUniform(1e-3, 1e-2)}, confirm_seeds=-1), "confirm_seeds=-1 must be an integer ≥ 0"),
    (dict(tune={"lr": LogUniform(1e-3, 1e-2)}, confirm_seeds=True), "confirm_seeds=True must be an integer ≥ 0"),
    (dict(tune={"lr": LogUniform(1e-3, 1e-2)}, confirm_seeds=1.5), "confirm_seeds=1.5 must be an integer ≥ 0"),
])
def test_bad_confirm_seeds_are_refused(extra, message):
    with pytest.raises(ConfigError, match="Ablation 'bad': " + message.replace("(", r"\(").replace(")", r"\)")):
        Ablation("bad", "q?", base="tiny", grid=grid(qk_norm=["none", "rmsnorm"]), **extra)


def test_the_sweep_total_counts_each_studys_confirmations_and_reads_older_trial_files(tmp_path):
    """stored_cells: studies × trials plus each study's confirm_seeds (none in a record written before them),
    over trial files without the `confirms` column and confirmation files with it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from db.sweeps import CELL_SCHEMA

    results = tmp_path / "results"
    db.write_sweep(results, "s", {"studies": [{"index": 0, "confirm_seeds": 2}, {"index": 1}], "trials": 3}, [])
    old = pa.schema([f for f in CELL_SCHEMA if f.name != "confirms"])
    (db.sweep_dir(results, "s") / "trials").mkdir()
    pq.write_table(pa.Table.from_pylist([{"sweep": "s", "arm": "a", "lr": 1e-3, "seed": 0, "trial": 0, "run_id": "t0"}],
                                        schema=old), db.sweep_dir(results, "s") / "trials" / "s0000-t000000.parquet")
    db.write_confirmation(results, "s", 0, 0, {"arm": "a", "lr": 1e-3, "seed": FRESH[0], "confirms": 0, "run_id": "c0"})
    refs, total = stored_cells(results, "s")
    assert total == 3 + 2 + 3
    assert sorted((ref.run_id, ref.label) for ref in refs) == [("c0", f"a lr=0.001 seed={FRESH[0]} confirms=0"),
                                                               ("t0", "a lr=0.001 seed=0 trial=0")]
