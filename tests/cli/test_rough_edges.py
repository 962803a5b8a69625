"""Bad input a new user meets, each one line and exit 2 before any compute, with the cause named; flags an
ablation makes meaningless get a warning line instead of being ignored silently."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import db
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


@pytest.mark.parametrize("command",
                         [["sweep", "qk_stability", "--dry-run"], ["run", "--preset", "tiny", "--steps", "1"]])
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


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_warmup_that_never_reaches_the_peak_is_one_warning_line(tmp_path, train_data_cfg):
    from experiments import expand

    done = cli("sweep", "qk_stability", "--dry-run", "--steps", "10", "--results", str(tmp_path / "results"))
    cells, warmup = len(expand(qk_stability).cells), qk_stability.train["warmup_steps"]
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "warning" in line]
    assert warnings == [f"harness sweep: warning: in all {cells} cells, warmup_steps={warmup} ≥ steps=10: the LR never "
                        f"reaches its peak lr (at most {10 / warmup:.0%} of it) and the cosine decay never starts; set "
                        "warmup_steps below steps (e.g. --set warmup_steps=1)."]
    done = cli("run", "--preset", "tiny", "--results", str(tmp_path / "results"), "--no-progress", "--data",
               train_data_cfg.source, "--set", f"cache_dir={train_data_cfg.cache_dir}", "--set",
               f"val_tokens={train_data_cfg.val_tokens}", "--set", "vocab_size=512", "--steps", "2", "--set",
               "seq_len=32", "--set", "batch_size=2", "--set", "warmup_steps=5", "--set", "val_every=2", "--set",
               "probe_every=2", "--set", "probe_seqs=1")
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if "warning" in line] == [
        "harness run: warning: warmup_steps=5 ≥ steps=2: the LR never reaches its peak lr (at most 40% of it) and the "
        "cosine decay never starts; set warmup_steps below steps (e.g. --set warmup_steps=0)."]


def without_root_powers(command: list[str]) -> list[str]:
    """`command` as this user would run it without root's override of permission bits (root passes every write
    check): setpriv drops those capabilities for the child."""
    if os.geteuid() != 0:
        return command
    assert shutil.which("setpriv"), "util-linux's setpriv is needed to test a read-only folder as root"
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--", *command]


@pytest.fixture
def store(tmp_path):
    results = tmp_path / "store"
    synthetic.write_planted(results, "qk", {"base": (0.0, 0.01, 2), "other": (0.0, 0.01, 2)}, steps=4)
    return results


@pytest.mark.slow
@pytest.mark.parametrize("command", [
    ["sweep", "qk_stability", "--workers", "1", "--results", "/proc/x/results"],
    ["run", "--preset", "tiny", "--steps", "1", "--results", "/proc/x/results"],
    ["report", "qk", "--out", "/proc/x/report.html"],
    ["plot", "curves", "qk", "--out", "/proc/x/curves.png"],
])
def test_an_output_path_nobody_can_create_is_one_line(store, command):
    done = cli(*command, *(["--results", str(store)] if command[0] in ("report", "plot") else []))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith(f"harness {command[0]}: error: ")
    assert done.stderr.endswith("cannot be written: no file can be created in '/proc' (No such file or directory).\n")


@pytest.mark.slow
def test_a_read_only_folder_is_one_line_for_every_command_that_writes(store, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o555)
    os.chmod(store, 0o555)  # a store this user may read but not write (its report's default place)
    try:
        default_report = store / "sweeps" / "qk" / "report.html"
        for args, message in [
            (["sweep", "qk_stability", "--workers", "1", "--results", str(locked / "results")],
             "is not writable by this user"),
            (["run", "--preset", "tiny", "--steps", "1", "--results", str(locked)], "is not writable by this user"),
            (["report", "qk", "--results", str(store), "--out", str(locked / "r.html")], "cannot be written: "),
            (["plot", "curves", "qk", "--results", str(store), "--out", str(locked / "c.png")],
             f"no file can be created in {str(locked)!r}"),
            (["report", "qk", "--results", str(store)],
             f"the report (default --out) {str(default_report)!r} cannot be written: "),
        ]:
            argv = without_root_powers([sys.executable, "-m", "cli.main", *args])
            done = subprocess.run(argv, capture_output=True, text=True)
            assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
            assert done.stderr.startswith(f"harness {args[0]}: error: ")
            assert "Traceback" not in done.stderr
    finally:
        os.chmod(locked, 0o755)
        os.chmod(store, 0o755)
    assert list(locked.iterdir()) == []  # the write probes left nothing behind


def test_a_file_that_is_not_python_is_one_line(tmp_path):
    hostname = tmp_path / "hostname"
    hostname.write_text("build-vm-7\n")  # like /etc/hostname: its first word would be a Python NameError
    done = cli("sweep", str(hostname), "--dry-run", "--results", str(tmp_path / "results"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(f"harness sweep: error: {str(hostname)!r} is not an ablation: an ablation is a .py "
                                  "file defining one Ablation, or a name from the library (")
    done = cli("run", "--config", str(hostname), "--results", str(tmp_path / "results"))
    assert done.returncode == 2 and done.stderr == (f"harness run: error: --config {str(hostname)!r} is not a Python "
                                                    "file (its name does not end in .py).\n")
