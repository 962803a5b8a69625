"""The floor plan (docs/internals.md) as a test: which package may import which, read from every import
statement of every module (top-level and inside functions), and, in a fresh interpreter, that importing every
module of analysis, db and errors loads no torch, no Lightning and no command line."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGES = ("errors", "db", "harness", "analysis", "experiments", "ablations", "cli")
# package → the project packages it may import (besides itself). cli, the top face, is imported by nobody.
ALLOWED = {
    "errors": set(),
    "db": {"errors"},
    "analysis": {"errors", "db"},
    "harness": {"errors", "db"},
    "experiments": {"errors", "db", "harness", "ablations"},  # ablations: the library's modules, found by name
    "ablations": {"errors", "harness", "experiments"},
    "cli": {"errors", "db", "harness", "analysis", "experiments", "ablations"},
}
TORCH_FREE = ("errors", "db", "analysis")


def imported_packages(path: Path) -> set[str]:
    """The project packages a module's import statements name (relative imports stay in their package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names & set(PACKAGES)


def test_every_package_imports_only_the_packages_below_it():
    breaches = []
    for package, allowed in ALLOWED.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            wrong = imported_packages(path) - allowed - {package}
            breaches += [f"{path.relative_to(ROOT)} imports {name}" for name in sorted(wrong)]
    assert breaches == []


def config_error_imported_elsewhere(path: Path) -> list[str]:
    """`path:line module` for every import of `ConfigError` from anywhere but `errors` (a re-export)."""
    return [f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{node.lineno} {node.module}"
            for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.ImportFrom) and node.module != "errors"
            and "ConfigError" in {alias.name for alias in node.names}]


def test_config_error_is_imported_from_errors_only():
    """One import path for ConfigError: errors/, at the bottom, which every layer may import."""
    paths = [path for package in (*PACKAGES, "tests", "benchmarks") for path in sorted((ROOT / package).rglob("*.py"))]
    assert [found for path in paths for found in config_error_imported_elsewhere(path)] == []


def test_the_floor_plan_names_every_package():
    found = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert found == set(PACKAGES)


def modules_of(package: str) -> list[str]:
    """Every module of `package`, dotted, from its files."""
    paths = sorted((ROOT / package).rglob("*.py"))
    return [".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__") for p in paths]


@pytest.mark.slow
def test_the_torch_free_packages_load_no_torch_lightning_or_command_line():
    modules = [m for package in TORCH_FREE for m in modules_of(package)]
    probe = (f"import importlib, sys\nfor m in {modules!r}: importlib.import_module(m)\n"
             "print(sorted(m for m in ('torch', 'lightning', 'cli', 'experiments', 'harness') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert len(modules) > 40 and loaded.strip() == "[]"


def test_a_breach_is_caught(tmp_path):
    """The check itself: a module of analysis that imports the command line inside a function is reported."""
    module = tmp_path / "breach.py"
    module.write_text("def f():\n    from cli.main import main\n    import torch.nn\n")
    assert imported_packages(module) - ALLOWED["analysis"] == {"cli"}


def test_a_second_import_path_is_caught(tmp_path):
    module = tmp_path / "reexport.py"
    module.write_text("from harness.config.base import ConfigError, check\nfrom errors import ConfigError\n")
    assert config_error_imported_elsewhere(module) == [f"{module}:1 harness.config.base"]
