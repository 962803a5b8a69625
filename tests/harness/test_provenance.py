"""Which code a process runs: the git commit and dirty flag of the checkout holding the `harness` package (the
oracle is git itself: `git rev-parse HEAD`, a tracked file edited), and the run's versions and device."""

import importlib.metadata
import platform
import subprocess

import pytest

import harness
from db.provenance import Code
from harness.provenance import checkout_state, current_code, package_root, run_provenance

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"]


def git(repo, *args) -> str:
    return subprocess.run([*GIT, "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    """A git repository holding a committed `harness/__init__.py` (and a module beside it)."""
    root = tmp_path / "checkout"
    (root / "harness").mkdir(parents=True)
    (root / "harness" / "__init__.py").write_text('__version__ = "9.9"\n')
    (root / "harness" / "model.py").write_text("WIDTH = 1\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first")
    return root


def test_a_clean_checkout_gives_its_head_commit(repo):
    assert checkout_state(repo) == (git(repo, "rev-parse", "HEAD"), False)


def test_an_edited_tracked_file_is_dirty_and_an_untracked_one_is_not(repo):
    (repo / "notes.txt").write_text("scratch\n")  # untracked: as for `git describe --dirty`, not a change of code
    (repo / "harness" / "__pycache__").mkdir()
    assert checkout_state(repo) == (git(repo, "rev-parse", "HEAD"), False)
    (repo / "harness" / "model.py").write_text("WIDTH = 2\n")
    assert checkout_state(repo) == (git(repo, "rev-parse", "HEAD"), True)
    git(repo, "commit", "-q", "-am", "second")
    assert checkout_state(repo) == (git(repo, "rev-parse", "HEAD"), False)


def test_a_package_installed_inside_some_repository_has_no_commit(repo):
    site = repo / ".venv" / "lib" / "site-packages"  # untracked: a virtualenv inside a checkout
    (site / "harness").mkdir(parents=True)
    (site / "harness" / "__init__.py").write_text("")
    assert checkout_state(site) == (None, None)


def test_no_repository_or_no_commit_gives_none(tmp_path):
    (tmp_path / "plain" / "harness").mkdir(parents=True)
    assert checkout_state(tmp_path / "plain") == (None, None)
    git(tmp_path / "plain", "init", "-q")
    git(tmp_path / "plain", "add", ".")
    assert checkout_state(tmp_path / "plain") == (None, None)


@pytest.mark.slow
def test_this_process_records_its_own_package_version_and_checkout():
    code = current_code()
    assert code.harness_version == harness.__version__ == importlib.metadata.version("harness")
    root = package_root()
    tracked = subprocess.run(["git", "-C", str(root), "ls-files", "--error-unmatch", "harness/__init__.py"],
                             capture_output=True).returncode == 0
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    expected = head.stdout.strip()
    assert code.git_commit == (expected if tracked else None)
    assert current_code() is code  # looked up once per process


def test_a_cpu_run_records_the_versions_and_device():
    import lightning
    import torch

    recorded = run_provenance("cpu", "32-true")
    assert recorded["torch_version"] == torch.__version__ and recorded["lightning_version"] == lightning.__version__
    assert recorded["python_version"] == platform.python_version()
    assert (recorded["device_name"], recorded["trainer_precision"]) == ("cpu", "32-true")
    assert Code.of(recorded) == current_code()
    assert run_provenance("cpu", "bf16-mixed", devices=2)["device_name"] == "cpu × 2"

