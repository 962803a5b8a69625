"""One run on two processes (gloo on CPU) against the same run on one process, the oracle: with the same global
batch, DDP and FSDP give the one-process losses, gradient norms and validation losses to 1e-5 and its final
weights; only process 0 writes (one segment, one checkpoint file per save); a stop that reaches one process
stops both at the same step with a checkpoint, and the run resumes from it on one process to the oracle's curve;
a stop one process decides (a pruner's) ends both at that step.

The two processes run every multi-device run of this module in one launch (as a sweep worker and its helper
process run cell after cell, with a process group per run), so the torch import is paid once."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import db
from harness.train.checkpoints import checkpoint_dir, load_checkpoint
from harness.train.placement import Placement
from harness.train.run import RunSpec, train_run

HERE = Path(__file__).parent
TOLERANCE = 1e-5


def curves(results, run_id):
    """{metric: [(step, value)]} of the run's loss, grad norm and validation loss."""
    rows = db.connect(results).execute(
        "SELECT name, step, value FROM metrics WHERE run_id = ? AND name IN ('train_loss', 'grad_norm', 'val_loss') "
        "ORDER BY name, step", [run_id]).fetchall()
    out = {}
    for name, step, value in rows:
        out.setdefault(name, []).append((step, value))
    return out


def assert_same_curves(got, want):
    assert got.keys() == want.keys() == {"train_loss", "grad_norm", "val_loss"}
    for name in want:
        assert [s for s, _ in got[name]] == [s for s, _ in want[name]], name
        assert max(abs(a - b) for (_, a), (_, b) in zip(got[name], want[name])) < TOLERANCE, name


@pytest.fixture(scope="module")
def runs(tmp_path_factory, train_data, train_data_cfg, tiny_model_cfg, tiny_train_cfg):
    """(the one-process oracle's results, the two-process runs' results, their logs): 'ddp', 'fsdp', 'stopped' (DDP,
    process 1 alone asked to stop at step 3, as a signal does) and 'decided' (process 0 alone stops at step 2, as
    a search's pruner does)."""
    root = tmp_path_factory.mktemp("distributed")
    oracle = root / "oracle"
    train_run(RunSpec(tiny_model_cfg, tiny_train_cfg, train_data_cfg, oracle, "r"), train_data, progress=False)
    two = root / "two"
    jobs = {"model": tiny_model_cfg.to_dict(), "train": tiny_train_cfg.to_dict(), "data": train_data_cfg.to_dict(),
            "rendezvous": str(root / "rendezvous"),
            "runs": [{"run_id": "ddp", "results": str(two), "devices": 2, "strategy": "ddp"},
                     {"run_id": "fsdp", "results": str(two), "devices": 2, "strategy": "fsdp"},
                     {"run_id": "stopped", "results": str(two), "devices": 2, "strategy": "ddp",
                      "stop_rank": 1, "stop_at": 3, "stop_how": "signal"},
                     {"run_id": "decided", "results": str(two), "devices": 2, "strategy": "ddp",
                      "stop_rank": 0, "stop_at": 2, "stop_how": "decide"}]}
    (root / "jobs.json").write_text(json.dumps(jobs))
    processes = [subprocess.Popen([sys.executable, str(HERE / "run_process.py"), str(root / "jobs.json"), str(rank)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in (0, 1)]
    logs = [p.communicate(timeout=400)[0] for p in processes]
    assert all(p.returncode == 0 for p in processes), "\n".join(logs)
    return oracle, two, logs


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_two_processes_match_one_with_the_same_global_batch(runs, strategy, tiny_train_cfg):
    oracle, two, logs = runs
    assert f"rank 0 {strategy}: completed" in logs[0] and f"rank 1 {strategy}: completed" in logs[1]
    assert_same_curves(curves(two, strategy), curves(oracle, "r"))
    state = db.run_state(two, strategy)
    assert state.result == "completed" and len(state.segments) == 1  # one writer: one segment
    files = sorted(p.name for p in checkpoint_dir(two, strategy).iterdir())
    assert files == ["last.ckpt", f"step{tiny_train_cfg.steps:07d}.ckpt", "tokenizer.json"]
    want = load_checkpoint(checkpoint_dir(oracle, "r") / "last.ckpt")["state_dict"]
    got = load_checkpoint(checkpoint_dir(two, strategy) / "last.ckpt")["state_dict"]  # a full checkpoint, also FSDP's
    assert got.keys() == want.keys()
    assert all(torch.allclose(got[k], want[k], atol=TOLERANCE) for k in want)


@pytest.mark.slow
def test_a_stop_reaching_one_process_stops_both_and_resumes_on_one(runs, train_data, train_data_cfg, tiny_model_cfg,
                                                                    tiny_train_cfg):
    oracle, two, logs = runs
    assert "rank 0 stopped: interrupted" in logs[0] and "rank 1 stopped: interrupted" in logs[1]
    assert (checkpoint_dir(two, "stopped") / "last.ckpt").resolve().name == "step0000003.ckpt"
    spec = RunSpec(tiny_model_cfg, tiny_train_cfg, train_data_cfg, two, "stopped", resume=True)
    assert train_run(spec, train_data, progress=False, placement=Placement(1)).status == "completed"
    assert list(db.run_state(two, "stopped").statuses.values()) == ["interrupted", "completed"]
    assert_same_curves(curves(two, "stopped"), curves(oracle, "r"))


def test_every_process_needs_an_equal_share_of_the_batch():
    from errors import ConfigError

    Placement(4).check_batch(8, "arm base")
    with pytest.raises(ConfigError, match=r"--devices-per-cell 3 does not divide TrainConfig.batch_size=8 of arm base: "
                                          r".*use one of 1, 2, 4, 8"):
        Placement(3).check_batch(8, "arm base")
    with pytest.raises(ConfigError, match=r"--strategy 'dpp' is invalid: use ddp or fsdp; did you mean 'ddp'\?"):
        Placement(2, "dpp")
    with pytest.raises(ConfigError, match=r"--devices-per-cell 0 is invalid"):
        Placement(0)


@pytest.mark.slow
def test_a_stop_one_process_decides_ends_every_process_at_that_step(runs):
    oracle, two, logs = runs
    assert "rank 0 decided: completed" in logs[0] and "rank 1 decided: completed" in logs[1]  # neither left waiting
    (last_step,) = db.connect(two).execute("SELECT last_step FROM runs WHERE run_id = 'decided'").fetchone()
    assert last_step == 2
    got, want = curves(two, "decided")["train_loss"], curves(oracle, "r")["train_loss"][:2]
    assert [s for s, _ in got] == [1, 2] and [v for _, v in got] == pytest.approx([v for _, v in want], abs=TOLERANCE)
