"""`write_report`: analyse a sweep, draw every figure, write the page atomically (the live dashboard's step).

pandas, matplotlib and seaborn are imported when a report is written, not when `analysis` is imported.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.cells import METRIC, MIN_EFFECT

if TYPE_CHECKING:
    from analysis.source import SweepInfo

REPORT_FILE = "report.html"


def default_path(results_dir: str | os.PathLike | None, sweep: str) -> Path:
    """`<results>/sweeps/<sweep>/report.html`."""
    import db

    return db.sweep_dir(db.resolve_results_dir(results_dir), sweep) / REPORT_FILE


def write_report(
    results_dir: str | os.PathLike | None, sweep: str, out: str | os.PathLike | None = None, *,
    metric: str = METRIC, baseline: str | None = None, min_effect: float = MIN_EFFECT,
) -> Path:
    """Write `sweep`'s report to `out` (default `<results>/sweeps/<sweep>/report.html`) and return its path.

    The file is replaced atomically (temp file + os.replace), so a browser or server never reads half a page.
    While the sweep runs the page reloads itself; a running sweep with nothing finished yet gets a page
    that says so. AnalysisError (exit 2 in the CLI) for an unknown sweep, metric or baseline, and for a
    sweep that has stopped with no finished run.
    """
    page, _ = render_report(results_dir, sweep, metric=metric, baseline=baseline, min_effect=min_effect)
    out = Path(out) if out is not None else default_path(results_dir, sweep)
    write_page(page, out)
    return out


def render_report(
    results_dir: str | os.PathLike | None, sweep: str, *,
    metric: str = METRIC, baseline: str | None = None, min_effect: float = MIN_EFFECT,
) -> tuple[str, SweepInfo]:
    """The report page of `sweep` and what the sweep's progress was when it was read (see `write_report`)."""
    from analysis.compare import check_finished
    from analysis.frames import load_sweep
    from analysis.plots import FIGURES, make_context
    from analysis.report.html import figure
    from analysis.report.page import render
    from analysis.summary import analyse

    data = load_sweep(results_dir, sweep)
    if data.finished.empty and data.info.running:
        return render(data.info), data.info
    check_finished(data)
    analysis = analyse(data, metric, baseline, min_effect)
    context = make_context(data, metric, analysis.baseline)
    plots = [draw(context) for draw in FIGURES.values()]
    return render(data.info, analysis, [figure(p.title, p.caption, p.png(), p.sql) for p in plots]), data.info


def write_page(page: str, out: Path) -> None:
    """Replace `out` with `page` atomically."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")  # unique: writers may overlap
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as sink:
            sink.write(page)
        os.chmod(temp, 0o644)  # mkstemp makes it private; the page is meant to be read
        os.replace(temp, out)
    except BaseException:
        Path(temp).unlink(missing_ok=True)  # a full disk must not leave half a page behind
        raise
