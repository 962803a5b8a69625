"""--keep-checkpoints: how many checkpoint files a run leaves (last: its newest, the result's; all: every one;
none: none once it has a result), and that a run that can still resume keeps its newest whatever is asked."""

import os

import pytest

from cli.main import main
from harness.train.checkpoints import checkpoint_dir
from harness.train.run import RunSpec, train_run


def trained(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg, keep):
    results = tmp_path / "results"
    spec = RunSpec(tiny_model_cfg, tiny_train_cfg.replace(steps=8, checkpoint_every=2), train_data_cfg, results, "r",
                   keep_checkpoints=keep)
    outcome = train_run(spec, train_data, progress=False)
    return outcome, results, sorted(p.name for p in checkpoint_dir(results, "r").glob("*.ckpt"))


@pytest.mark.parametrize("keep, files", [
    ("last", ["last.ckpt", "step0000008.ckpt"]),
    ("all", ["last.ckpt", "step0000002.ckpt", "step0000004.ckpt", "step0000006.ckpt", "step0000008.ckpt"]),
    ("none", []),
])
def test_a_finished_run_keeps_what_was_asked(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg,
                                              keep, files, capsys):
    outcome, results, found = trained(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg, keep)
    assert outcome.status == "completed" and found == files
    if files:
        assert os.readlink(checkpoint_dir(results, "r") / "last.ckpt") == "step0000008.ckpt"
    code = main(["sample", "r", "--results", str(results), "--prompt", "def", "--max-new-tokens", "2"])
    err = capsys.readouterr().err
    assert (code, err.strip()) == (0, "") if files else (code == 2 and "kept no checkpoint (trained with "
                                                          "--keep-checkpoints none)" in err)


@pytest.mark.slow
def test_an_interrupted_run_keeps_its_checkpoint_even_with_none(tmp_path, train_data, train_data_cfg, tiny_model_cfg,
                                                                tiny_train_cfg):
    from harness.train.interrupt import request_stop

    class StopAtStep3:
        def on_train_batch_end(self, trainer, *args):
            if trainer.global_step == 3:
                request_stop(15)

    from lightning.pytorch import Callback

    stopper = type("Stopper", (StopAtStep3, Callback), {})()
    results = tmp_path / "results"
    spec = RunSpec(tiny_model_cfg, tiny_train_cfg.replace(steps=8, checkpoint_every=100), train_data_cfg, results, "r",
                   keep_checkpoints="none")
    outcome = train_run(spec, train_data, progress=False, extra_callbacks=[stopper])
    assert outcome.status == "interrupted"
    assert ([p.name for p in checkpoint_dir(results, "r").glob("step*.ckpt")]
            == [f"step{outcome.interrupted.step:07d}.ckpt"])
