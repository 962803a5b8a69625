"""README's Quick start is the project's contract with a newcomer: two bash blocks, and CI runs the second."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quick_start_blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.split(r"^## Quick start\s*$", text, flags=re.M)[1]
    section = re.split(r"^## ", section, flags=re.M)[0]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.S)


def test_quick_start_has_exactly_two_bash_blocks():
    assert len(quick_start_blocks()) == 2


def test_ci_runs_exactly_the_readme_test_block():
    test_block = [line for line in quick_start_blocks()[1].splitlines() if line.strip()]
    ci_lines = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    assert ci_lines[-len(test_block):] == test_block


def test_both_blocks_install_the_cpu_torch_first():
    for block in quick_start_blocks():
        assert block.index("pip install torch==2.13.0") < block.index("pip install -e")
