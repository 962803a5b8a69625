"""The dashboard's page of one run (`/run/<run_id>?sweep=S`): the report's one-run view on a page of its own, at a
finer resolution (`RUN_PAGE_POINTS` per signal), for a run in any state: while it trains the page reloads.

A run can belong to several sweeps (`sweep_cells`: a cell adopted from another sweep); `?sweep=` says which one's
labels and colours to use and where the link back goes, else the first by name.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from analysis.errors import AnalysisError, closest
from analysis.explore.json_data import script_json
from analysis.explore.payload import DEFAULT_EMA
from analysis.explore.plotly_js import plotly_js
from analysis.report.figures import run_panel
from analysis.report.index import crumbs, shell
from analysis.report.page import REFRESH_SECONDS, static

RUN_PAGE_POINTS = 1000


def _sweeps_of(con, run_id: str) -> list[str]:
    """The sweeps `run_id` is a cell of; AnalysisError naming the closest run id when it is in none."""
    found = [s for (s,) in con.execute("SELECT DISTINCT sweep FROM sweep_cells WHERE run_id = ? ORDER BY sweep",
                                       [run_id]).fetchall()]
    if not found:
        ids = [r for (r,) in con.execute("SELECT run_id FROM sweep_cells").fetchall()]
        hint = closest(run_id, ids)
        raise AnalysisError(f"no run {run_id!r} in any sweep of this store"
                            + (f"; did you mean {hint!r}?" if hint else "."))
    return found


def run_page(results_dir, con, run_id: str, sweep: str | None = None) -> str:
    """The page of run `run_id` as a cell of `sweep` (or of the first sweep it belongs to); AnalysisError for a run
    in no sweep."""
    from matplotlib.colors import to_hex

    from analysis.explore.run_data import run_view
    from analysis.plots.base import arm_colors
    from analysis.reading.finished import resolve_baseline
    from analysis.reading.frames import load_sweep

    sweeps = _sweeps_of(con, run_id)
    sweep = sweep if sweep in sweeps else sweeps[0]
    data = load_sweep(results_dir, sweep)
    view = run_view(data, run_id, statuses=None, loss_points=RUN_PAGE_POINTS, points=RUN_PAGE_POINTS)
    arms = {arm: {"label": data.shown(arm), "color": to_hex(color)}  # the colours of the sweep's report
            for arm, color in arm_colors(data.arms, resolve_baseline(data, None)).items()}
    running = view.info.get(run_id, {}).get("status") == "running"
    others = "".join(f' · also in <a href="/run/{quote(run_id)}?sweep={quote(s)}">{escape(s)}</a>'
                     for s in sweeps if s != sweep)
    line = crumbs(f'<a href="/sweep/{quote(sweep)}">sweep {escape(sweep)}</a>', f"run {escape(run_id)}{others}")
    reload = (f'<p class="status running"><span id="reload-state">this page reloads every {REFRESH_SECONDS} s while '
              'the run trains</span><button id="reload-toggle" type="button">pause reloading</button></p>'
              if running else "")
    options = {"arms": arms, "ema": DEFAULT_EMA}
    body = (line + reload + run_panel(list(view.sql.values()), hidden=False, back=f"/sweep/{quote(sweep)}") +
            '<script id="harness-run" type="application/json">'
            f'{script_json({"view": view.data(), "run": run_id, "options": options})}</script>'
            f"<script>{plotly_js()}</script><script>{static('run.js')}</script>"
            "<script>(function () { var d = JSON.parse(document.getElementById('harness-run').textContent);"
            " harnessRun.draw(document.getElementById('run-detail'), d.view, d.run, d.options); })();</script>")
    return shell(f"run {run_id}", body, reload=running)
