import subprocess
import sys


def test_analysis_never_imports_torch():
    code = (
        "import sys, analysis, analysis.plots, analysis.report.serve, analysis.summary; "
        "print(sorted(m for m in ('torch', 'lightning') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
