"""plotly.js, inlined into every report: read from the installed plotly package's files, without importing it."""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from pathlib import Path

from analysis.errors import AnalysisError

BUNDLE = ("package_data", "plotly.min.js")


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """The minified plotly.js bundle (about 4.8 MB); AnalysisError naming the fix when plotly is missing."""
    spec = importlib.util.find_spec("plotly")
    path = (Path(next(iter(spec.submodule_search_locations)), *BUNDLE) if spec and spec.submodule_search_locations
            else None)
    if path is None or not path.is_file():
        raise AnalysisError("the report's interactive figures need plotly.js from the plotly package: pip install "
                            "'plotly>=6,<8'")
    return path.read_text(encoding="utf-8")
