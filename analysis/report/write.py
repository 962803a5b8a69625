"""`write_report`: analyse a sweep, draw every figure, write the page atomically (the live dashboard's step).

pandas, matplotlib and seaborn are imported when a report is written, not when `analysis` is imported.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from analysis.reading.cells import METRIC, MIN_EFFECT

if TYPE_CHECKING:
    from analysis.reading.source import SweepInfo
    from analysis.summary import Analysis

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
    rendered = render_report(results_dir, sweep, metric=metric, baseline=baseline, min_effect=min_effect)
    out = Path(out) if out is not None else default_path(results_dir, sweep)
    write_page(rendered.page(), out)
    return out


@dataclass(frozen=True)
class Rendered:
    """A sweep's analysed report, ready to become its page; `info` is its progress when it was read."""

    info: SweepInfo
    analysis: Analysis | None = None
    figures: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)

    def page(self, index: str | None = None) -> str:
        """The page; `index`: the dashboard's index when the dashboard serves it (see `analysis.report.page.render`)."""
        from analysis.report.page import render

        return render(self.info, self.analysis, self.figures, self.scripts, index)


def render_report(
    results_dir: str | os.PathLike | None, sweep: str, *,
    metric: str = METRIC, baseline: str | None = None, min_effect: float = MIN_EFFECT, runner: bool | None = None,
) -> Rendered:
    """`sweep`'s analysed report (see `write_report`); `runner`: whether its runner is known to be alive
    (the live report process: True while its input is open), which decides running from interrupted."""
    from analysis.explore.payload import explore
    from analysis.plots import make_context
    from analysis.reading.finished import check_finished
    from analysis.reading.frames import load_sweep
    from analysis.report.figures import scripts, section
    from analysis.summary import analyse

    data = load_sweep(results_dir, sweep)
    info = data.info.with_runner(runner)
    if data.finished.empty and info.running:
        return Rendered(info)
    check_finished(data)
    analysis = analyse(data, metric, baseline, min_effect)
    figures, payload, run_sql = explore(make_context(data, metric, analysis.baseline))
    if analysis.ladder is not None:
        from analysis.explore.ladder import ladder_figure

        payload["fixed"]["ladder"] = ladder_figure(analysis.ladder, metric)
    return Rendered(info, analysis, section(figures, run_sql), list(scripts(payload)))


def write_page(page: str, out: Path, tag: str = "") -> None:
    """Replace `out` with `page` atomically (through a temp file `.<name>.<tag><random>.tmp` beside it)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    # unique: writers may overlap
    handle, temp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.{tag}", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as sink:
            sink.write(page)
        os.chmod(temp, 0o644)  # mkstemp makes it private; the page is meant to be read
        os.replace(temp, out)
    except BaseException:
        Path(temp).unlink(missing_ok=True)  # a full disk must not leave half a page behind
        raise
