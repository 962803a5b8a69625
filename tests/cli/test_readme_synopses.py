"""README's command table names every option of `harness presets`, `calc`, `run` and `sample` (it had
drifted: `--run-id`, `--no-progress`, `--max-new-tokens`, `--seq-len`, `--kv-dtype` were missing)."""

import argparse
import importlib
import re
from pathlib import Path

import pytest

README = Path(__file__).parents[2] / "README.md"


def options(command: str) -> set[str]:
    subparsers = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"cli.{command}").register(subparsers)
    parser = subparsers.choices[command]
    return {flag for action in parser._actions for flag in action.option_strings
            # retired spellings: refused
            if flag.startswith("--") and flag != "--help" and action.help != argparse.SUPPRESS}


@pytest.mark.parametrize("command", ["presets", "calc", "run", "sample", "ablations", "sweep", "sweeps"])
def test_readme_synopsis_names_every_option(command):
    row = next(line for line in README.read_text().splitlines() if line.startswith(f"| `harness {command}"))
    synopsis = row.split("`")[1]  # the first cell, `harness … [--option …]`
    assert options(command) - set(re.findall(r"--[a-z][a-z-]*", synopsis)) == set()
