"""Checkpoints are loaded without running code and without Lightning: a pickle planted in a shared results
directory is refused by `harness sample` and `harness run --resume` before it can act, and sampling a run
imports no Lightning."""

import builtins
import subprocess
import sys

import pytest
import torch

import db
from cli.main import main
from harness.config.model import ModelConfig
from harness.model import build_model
from harness.train.checkpoints import CONFIGS_KEY, LAST, TOKENIZER, checkpoint_dir


class Planted:
    """Unpickling this opens (so creates) `marker`: code running on load would leave the file behind."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return builtins.open, (self.marker, "w")  # pickled as io.open


def test_sample_and_resume_refuse_a_checkpoint_that_would_run_code(tmp_path, capsys):
    results, marker = tmp_path / "results", tmp_path / "code-ran"
    ckpt_dir = checkpoint_dir(results, "planted")
    ckpt_dir.mkdir(parents=True)
    torch.save({"global_step": 1, "state_dict": {}, CONFIGS_KEY: Planted(marker)}, ckpt_dir / LAST)
    db.RunWriter.open(results, "planted", config={})  # an unfinished run, so --resume goes as far as loading

    assert main(["sample", "planted", "--prompt", "x", "--results", str(results)]) == 2
    resume = ["run", "--preset", "tiny", "--results", str(results), "--run-id", "planted", "--resume", "--no-progress"]
    assert main(resume) == 2
    errors = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in errors] == ["harness sample", "harness run"]
    assert all("holds io.open" in line and "refusing to load it" in line for line in errors)
    assert not marker.exists()


@pytest.mark.slow
def test_sample_imports_no_lightning(tmp_path, train_data):
    """A checkpoint written as Lightning writes one (model under `model.`, configs beside it), sampled in a
    fresh process."""
    cfg = ModelConfig(vocab_size=train_data.vocab_size, d_model=32, n_layers=1, n_heads=2)
    ckpt_dir = checkpoint_dir(tmp_path, "run")
    ckpt_dir.mkdir(parents=True)
    state = {f"model.{name}": value for name, value in build_model(cfg).state_dict().items()}
    torch.save({"global_step": 1, "state_dict": state, CONFIGS_KEY: {"model": cfg.to_dict()}}, ckpt_dir / LAST)
    train_data.tokenizer.save(str(ckpt_dir / TOKENIZER))
    script = (
        "import sys; from cli.main import main; "
        "code = main(['sample', 'run', '--prompt', 'The for', '--max-new-tokens', '3', '--results', "
        f"{str(tmp_path)!r}]); print(code, 'lightning' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split()[-2:] == ["0", "False"]
