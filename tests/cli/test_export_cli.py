"""`harness export`: the export on the command line, and every bad input as one line and exit code 2 before
anything is written: an unknown sweep (with the closest name), a sweep with no runs, a tracker library that is not
installed (with the extra to install), a directory that cannot be written. No tracker library is imported by
`harness --help` or by any module of the other commands."""

import subprocess
import sys
from pathlib import Path

import pytest

import db
from cli.main import main

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis" / "export"))  # the export tests' planted store
import planted_store  # noqa: E402

ROOT = Path(__file__).parents[2]
LIBRARIES = ("tensorboard", "wandb", "mlflow")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """The planted store, plus sweep `planned` whose one cell has no run yet."""
    path = tmp_path_factory.mktemp("export-cli") / "results"
    planted_store.write_store(path)
    db.write_sweep(path, "planned", {}, [{"arm": "a", "lr": 1e-3, "seed": 0, "run_id": "not-yet", "steps": 9}])
    return path


def one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    return captured.err


def test_export_writes_every_run_and_says_how_to_look(results, tmp_path, capsys):
    out = tmp_path / "tb"
    assert main(["export", "exp", "--to", "tensorboard", str(out), "--results", str(results), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("exported 5 runs (2 arms) of sweep 'exp'") and f"tensorboard --logdir {out}" in printed
    assert len(list(out.glob("exp/*/*/events.out.tfevents.*"))) == len(planted_store.RUNS)


def test_an_unknown_sweep_is_one_line_with_the_closest_name(results, tmp_path, capsys):
    assert main(["export", "exq", "--to", "tensorboard", str(tmp_path / "out"), "--results", str(results)]) == 2
    error = one_line_error(capsys)
    assert "no sweep named 'exq'" in error and "did you mean 'exp'?" in error
    assert not (tmp_path / "out").exists()


def test_a_sweep_without_runs_is_one_line(results, tmp_path, capsys):
    assert main(["export", "planned", "--to", "tensorboard", str(tmp_path / "out"), "--results", str(results)]) == 2
    assert "sweep 'planned' has no runs yet (0 of 1 cells; partial): nothing to export" in one_line_error(capsys)
    assert not (tmp_path / "out").exists()


def test_a_missing_tracker_library_names_the_extra_to_install(results, tmp_path):
    """wandb made uninstalled (to import, find_spec and importlib.metadata) by db.hidden_imports' finder."""
    argv = ["export", "exp", "--to", "wandb", str(tmp_path / "out"), "--results", str(results)]
    code = ("import sys\nfrom db.hidden_imports import hidden\nfrom cli.main import main\n"
            f"with hidden(('wandb',)):\n    sys.exit(main({argv!r}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith("harness export: error: --to wandb needs the wandb package")
    assert done.stderr.rstrip().endswith("pip install 'harness[wandb]'")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("where", ["a file", "under a file"])
def test_a_directory_that_cannot_be_written_is_one_line(results, tmp_path, capsys, where):
    (tmp_path / "taken").write_text("not a directory")
    out = tmp_path / "taken" if where == "a file" else tmp_path / "taken" / "out"
    assert main(["export", "exp", "--to", "tensorboard", str(out), "--results", str(results)]) == 2
    error = one_line_error(capsys)
    assert error.startswith(f"harness export: error: cannot write the export to {out}: ")
    assert ("it is a file" if where == "a file" else "Not a directory") in error
    assert (tmp_path / "taken").read_text() == "not a directory"


def test_an_unknown_tracker_is_a_usage_error(results, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["export", "exp", "--to", "tensorbord", str(tmp_path), "--results", str(results)])
    assert stopped.value.code == 2 and "invalid choice: 'tensorbord'" in one_line_error(capsys)


def test_the_choices_are_the_export_packages_trackers():
    from analysis.export import TRACKERS
    from cli.export import TRACKERS as CHOICES

    assert CHOICES == tuple(TRACKERS)


@pytest.mark.slow  # imports every module of analysis and cli in a fresh interpreter
def test_no_tracker_library_is_imported_by_help_or_by_any_module():
    """`harness --help` builds every command's parser; then every module of analysis (the export's included)
    and of cli is imported: none of them may load a tracker library at import."""
    modules = [".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
               for package in ("analysis", "cli") for p in sorted((ROOT / package).rglob("*.py"))]
    code = (f"import importlib, sys\nfrom cli.main import build_parser\nbuild_parser()\n"
            f"print(sorted(m for m in {LIBRARIES!r} if m in sys.modules))\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            f"print(sorted(m for m in {LIBRARIES!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "[]"] and "analysis.export.wandb" in modules
