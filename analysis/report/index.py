"""The dashboard's own pages: the index of every sweep in the store, and two sweeps side by side."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from analysis.report.page import REFRESH_SECONDS, static
from analysis.source import RUNNING_STATE, SweepInfo


def _shell(title: str, body: str, reload: bool = False) -> str:
    refresh = f' data-reload="{REFRESH_SECONDS}"' if reload else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{static('report.css')}{static('dashboard.css')}</style></head><body{refresh}>{body}"
            f"<script>{static('report.js')}</script></body></html>")


def _row(info: SweepInfo) -> str:
    link = f'<a href="/sweep/{quote(info.name)}">{escape(info.name)}</a>'
    done = 100 * info.n_done / info.n_cells if info.n_cells else 0
    bar = f'<span class="bar"><span style="width:{done:.0f}%"></span></span>'
    return (f'<tr data-sweep="{escape(info.name)}"><td>{link}</td><td class="text">{escape(info.question or "")}</td>'
            f'<td>{bar} {escape(info.progress())}</td><td class="state {info.state}">{info.state}</td></tr>')


def _damage(lines: list[str]) -> str:
    items = "".join(f"<li><code>{escape(line)}</code></li>" for line in lines)
    return (f'<div class="status damaged"><p>Damaged files, left out of every sweep below (<code>harness db check '
            f'--repair</code> moves them aside):</p><ul>{items}</ul></div>') if lines else ""


def index_page(results: str, sweeps: list[SweepInfo], damage: list[str] = ()) -> str:
    """Every sweep with its question, progress and state, and a line per damaged file of the store; a form to open
    two side by side."""
    rows = "".join(_row(info) for info in sweeps) or '<tr><td colspan="4">No sweep in this store yet.</td></tr>'
    options = "".join(f'<option value="{escape(info.name)}">{escape(info.name)}</option>' for info in sweeps)
    running = any(info.state == RUNNING_STATE for info in sweeps)
    status = (f'<p class="status running"><span id="reload-state">this page reloads every {REFRESH_SECONDS} s while a sweep runs</span>'
              '<button id="reload-toggle" type="button">pause reloading</button></p>' if running else "")
    body = (f"<h1>Sweeps</h1><p>Results store <code>{escape(results)}</code>.</p>{status}{_damage(list(damage))}"
            '<table class="sweeps"><thead><tr><th>sweep</th><th>question</th><th>progress</th><th>state</th></tr></thead>'
            f'<tbody>{rows}</tbody></table><h2>Two sweeps side by side</h2><form action="/compare" method="get">'
            f'<select name="a">{options}</select> <select name="b">{options}</select> <button type="submit">open</button></form>')
    return _shell("harness dashboard", body, reload=running)


def side_by_side_page(left: str, right: str) -> str:
    """Two sweeps' live pages next to each other, each scrolling on its own."""
    frames = "".join(f'<iframe title="{escape(name)}" src="/sweep/{quote(name)}"></iframe>' for name in (left, right))
    body = (f'<p class="crumbs"><a href="/">all sweeps</a> · {escape(left)} | {escape(right)}</p>'
            f'<div class="pair">{frames}</div>')
    return _shell(f"{left} | {right}", body)


def message_page(title: str, message: str) -> str:
    """A page that says why there is nothing to show."""
    return _shell(title, f'<p class="crumbs"><a href="/">all sweeps</a></p><h1>{escape(title)}</h1><p>{escape(message)}</p>')
