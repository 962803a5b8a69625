"""Bad input a new user meets, each one line and exit 2 before any compute, with the cause named; flags an
ablation makes meaningless get a warning line instead of being ignored silently."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import db
import pytest

from ablations.qk_stability import ablation as qk_stability
from cli.main import main
from experiments import Ablation

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True)


@pytest.mark.parametrize("args, message", [
    (["sweep", "qk_stability", "--workers", "x"],
     "harness sweep: error: argument --workers: invalid int value: 'x' (see `harness sweep --help`)"),
    (["swep"], "harness: error: argument COMMAND: invalid choice: 'swep'"),
])
def test_usage_errors_are_one_line(args, message):
    done = cli(*args)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith(message), done.stderr


@pytest.mark.parametrize("command", [["sweep", "qk_stability", "--dry-run"], ["run", "--preset", "tiny", "--steps", "1"]])
def test_results_under_a_file_is_one_line(tmp_path, command):
    (tmp_path / "a-file").write_text("")
    done = cli(*command, "--results", str(tmp_path / "a-file" / "results"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"cannot be created: {str(tmp_path / 'a-file')!r} is a file, not a directory." in done.stderr


def test_repeated_lrs_are_named_as_such():
    with pytest.raises(ValueError, match=r"lrs=\[0.001, 0.001, 0.01\] repeats 0.001; give each LR once"):
        Ablation("a", "Which LR?", base="tiny", lrs=[1e-3, 0.001, 1e-2])


@pytest.mark.parametrize("content", [b"\x00\x01binary\xff", b"x = 1\n\x00\n"])
def test_a_binary_ablation_file_is_one_line_without_a_line_number(tmp_path, content):
    path = tmp_path / "binary.py"
    path.write_bytes(content)
    done = cli("sweep", str(path), "--dry-run", "--results", str(tmp_path / "results"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "line None" not in done.stderr
    assert done.stderr.startswith(f"harness sweep: error: {path}")


def test_flags_the_ablation_ignores_are_warned_about(tmp_path):
    done = cli("sweep", "qk_stability", "--dry-run", "--set", "lr=0.01", "--optuna-storage", "sqlite:///x.db",
               "--results", str(tmp_path / "results"))
    assert done.returncode == 0, done.stderr
    assert f"warning: --set lr=0.01 is ignored: the ablation sweeps lrs={list(qk_stability.lrs)}" in done.stderr
    assert "warning: --optuna-storage is ignored: the ablation has no search (tune=)." in done.stderr


def test_a_metric_suggestion_is_a_metric_not_a_config_switch(tmp_path, capsys):
    synthetic.write_planted(tmp_path / "results", "qk", {"base": (0.0, 0.01, 2), "other": (0.0, 0.01, 2)}, steps=4)
    assert main(["compare", "qk", "--results", str(tmp_path / "results"), "--metric", "spike_score"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "spike_sigma" not in err and "batch_size" not in err and "harness summary" in err
    assert main(["compare", "qk", "--results", str(tmp_path / "results"), "--metric", "xyz"]) == 2
    listed = capsys.readouterr().err.split("metrics: ")[1]
    assert "final_val_loss" in listed and "adam_beta1" not in listed and "batch_size" not in listed


def test_a_run_labelled_with_a_planned_sweep_is_warned_that_it_is_not_one_of_its_cells(tmp_path, train_data_cfg):
    results = tmp_path / "results"
    db.write_sweep(results, "planned", {"question": "q?", "baseline": "base"}, [])
    done = cli("run", "--preset", "tiny", "--results", str(results), "--no-progress", "--data", train_data_cfg.source,
               "--set", f"cache_dir={train_data_cfg.cache_dir}", "--set", f"val_tokens={train_data_cfg.val_tokens}",
               "--set", "vocab_size=512", "--steps", "2", "--set", "seq_len=32", "--set", "batch_size=2",
               "--set", "warmup_steps=1", "--set", "val_every=2", "--set", "probe_every=2", "--set", "probe_seqs=1",
               "--sweep", "planned", "--arm", "mine")
    assert done.returncode == 0, done.stderr
    assert "warning: sweep 'planned' has a plan (from `harness sweep`); this run is not one of its cells" in done.stderr
