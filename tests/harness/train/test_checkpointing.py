"""`last.ckpt` after a writer re-pointed it and only then found its claim taken over (paused between the fence
check and the rename): it names the result's checkpoint, else the live holder's newest, else what the lost
re-point replaced, never the superseded generation's file. A real training run; its fence loses the claim at
that exact moment, while the test plays the worker that took the cell over."""

import os
import shutil

import pytest

import db
from harness.train.checkpoints import checkpoint_dir, standing_after_takeover
from harness.train.fencing import FenceLost
from harness.train.run import RunSpec, train_run

LOST_AT = "keep last.ckpt at step0000004-g0.ckpt"


class TakenOverWhileRepointing:
    """Claim 0's fence: holds until the writer has pointed `last.ckpt` at its step-4 file, then the cell turns
    out to be taken over, and `taker(folder)` does what the new holder did meanwhile."""

    generation = 0

    def __init__(self, taker):
        self.taker = taker

    def check(self, what: str) -> None:
        if what == LOST_AT:
            self.taker()
            raise FenceLost(f"not writing ({what}): claim 0 was taken over")

    def lost(self) -> bool:
        return False


def lose_the_claim_while_repointing(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg, taker):
    results = tmp_path / "results"
    spec = RunSpec(tiny_model_cfg, tiny_train_cfg.replace(steps=8, checkpoint_every=2), train_data_cfg, results, "r")
    folder = checkpoint_dir(results, "r")
    with pytest.raises(FenceLost):
        train_run(spec, train_data, progress=False, fence=TakenOverWhileRepointing(lambda: taker(results, folder)))
    return os.readlink(folder / "last.ckpt"), sorted(p.name for p in folder.glob("step*.ckpt"))


@pytest.mark.slow
def test_with_no_later_checkpoint_last_goes_back_to_the_file_the_taker_resumed_from(tmp_path, train_data,
                                                                                     train_data_cfg, tiny_model_cfg,
                                                                                     tiny_train_cfg):
    last, files = lose_the_claim_while_repointing(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg,
                                                  lambda results, folder: None)
    assert last == "step0000002-g0.ckpt"
    assert files == ["step0000002-g0.ckpt", "step0000004-g0.ckpt"]  # the lost writer removed nothing


@pytest.mark.slow
def test_last_names_the_live_holders_newest_checkpoint(tmp_path, train_data, train_data_cfg, tiny_model_cfg,
                                                        tiny_train_cfg):
    def taker(results, folder):  # claim 1 resumed from step 2 and checkpointed step 3
        shutil.copy(folder / "step0000002-g0.ckpt", folder / "step0000003-g1.ckpt")

    last, _ = lose_the_claim_while_repointing(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg,
                                              taker)
    assert last == "step0000003-g1.ckpt"


@pytest.mark.slow
def test_last_names_the_results_checkpoint(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg):
    def taker(results, folder):  # claim 1 finished the run meanwhile
        shutil.copy(folder / "step0000002-g0.ckpt", folder / "step0000008-g1.ckpt")
        shutil.copy(folder / "step0000002-g0.ckpt", folder / "step0000006-g2.ckpt")  # a later, lost writer's
        writer = db.RunWriter.open(results, "r", claim=1, resume=True, resume_from_step=3)
        writer.close("completed", summary={"checkpoint": "step0000008-g1.ckpt"})

    last, _ = lose_the_claim_while_repointing(tmp_path, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg,
                                              taker)
    assert last == "step0000008-g1.ckpt"


def test_the_choice_among_files(tmp_path):
    folder = checkpoint_dir(tmp_path, "r")
    folder.mkdir(parents=True)
    assert standing_after_takeover(tmp_path, "r", 0, "step0000002-g0.ckpt") is None  # gone: a resume starts at 0
    for name in ("step0000002-g0.ckpt", "step0000009-g1.ckpt", "step0000004-g2.ckpt", "step0000003-g2.ckpt",
                 "step0000005.ckpt", "last.ckpt"):
        (folder / name).touch()
    assert standing_after_takeover(tmp_path, "r", 0, "step0000002-g0.ckpt") == "step0000004-g2.ckpt"
    assert standing_after_takeover(tmp_path, "r", 2, "step0000002-g0.ckpt") == "step0000002-g0.ckpt"
