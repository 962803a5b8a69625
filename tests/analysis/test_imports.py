import subprocess
import sys

import pytest


def _loaded_after(code: str, watched: tuple[str, ...]) -> list[str]:
    probe = f"import sys; {code}; print(sorted(m for m in {watched!r} if m in sys.modules))"
    return eval(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout)


@pytest.mark.slow
def test_analysis_never_imports_torch():
    code = "import analysis, analysis.plots, analysis.report.live, analysis.report.serve, analysis.summary"
    assert _loaded_after(code, ("torch", "lightning")) == []


def test_the_compare_path_imports_no_pandas_and_no_plotting():
    code = ("import analysis, analysis.reading.cells, analysis.reading.finished, analysis.comparison.table, "
            "analysis.reading.source")
    assert _loaded_after(code, ("pandas", "matplotlib", "seaborn")) == []
