"""A trial its pruner stops is a result: the run ends early with status `pruned`, its validation losses
reported to the real Optuna trial."""

import optuna
import pytest

import db
from experiments.search.pruning import PruneOnValidation
from harness.config import TrainConfig
from harness.presets import from_name


@pytest.mark.slow
def test_a_pruned_trial_stops_early_and_is_stored_as_pruned(tmp_path, train_data_cfg):
    from harness.data import prepare
    from harness.train.run import RunSpec, train_run

    study = optuna.create_study(pruner=optuna.pruners.ThresholdPruner(upper=0.0))  # any loss is "too high"
    trial = study.ask()
    model = from_name("tiny", vocab_size=512, d_model=32, n_heads=2, n_kv_heads=1, max_seq_len=64)
    train = TrainConfig(steps=12, batch_size=4, seq_len=32, val_every=4, val_seqs=4, probe_every=100, probe_seqs=2)
    spec = RunSpec(model, train, train_data_cfg, tmp_path / "results", "trial")
    outcome = train_run(spec, prepare(train_data_cfg, 512), progress=False, extra_callbacks=[PruneOnValidation(trial)])
    assert outcome.status == "pruned"
    assert list(study.trials[0].intermediate_values) == [4]
    status, last_step = db.connect(tmp_path / "results").execute("SELECT status, last_step FROM runs").fetchone()
    assert status == "pruned" and last_step == 4
