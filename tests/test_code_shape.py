"""The code stays readable: no function outside tests is longer than 50 lines (issue 16), counted from its
`def` line to its last line, docstring included."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).parents[1]
LONGEST = 50
SOURCES = ("errors", "db", "harness", "analysis", "experiments", "ablations", "cli", "benchmarks")


def long_functions(path: Path) -> list[str]:
    """`path:line name (N lines)` for every function or method of the file longer than LONGEST lines."""
    found, label = [], path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > LONGEST:
            found.append(f"{label}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)")
    return found


def test_no_function_is_longer_than_fifty_lines():
    assert ([f for package in SOURCES for path in sorted((ROOT / package).rglob("*.py")) for f in long_functions(path)]
            == [])


def test_the_check_sees_a_long_function(tmp_path):
    module = tmp_path / "long.py"
    module.write_text("class A:\n    def f(self):\n" + "        x = 1\n" * LONGEST)
    assert long_functions(module) == [f"{module}:2 f ({LONGEST + 1} lines)"]
