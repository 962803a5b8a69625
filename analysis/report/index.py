"""The dashboard's own pages: the index of every sweep in the store (its question, headline verdict, tags, progress
and state; tag and archive forms; a choice of sweeps to overlay), and the page shell every dashboard page shares
(each links back to the index: `data-index` tells the report's script where the dashboard's pages are)."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence
from urllib.parse import quote, urlencode

from analysis.reading.source import RUNNING_STATE, SweepInfo
from analysis.report.index_verdict import IndexVerdict
from analysis.report.page import REFRESH_SECONDS, static
from db.labels import Labels

INDEX = "/"


def shell(title: str, body: str, reload: bool = False) -> str:
    """A dashboard page: `body` in the report's styles, reloading every REFRESH_SECONDS when `reload`."""
    refresh = f' data-reload="{REFRESH_SECONDS}"' if reload else ""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f"<style>{static('report.css')}{static('dashboard.css')}</style></head>"
            f'<body data-index="{INDEX}"{refresh}>{body}'
            f"<script>{static('report.js')}</script></body></html>")


@dataclass(frozen=True)
class IndexRow:
    """One sweep of the index: its progress, its labels and (for a shown sweep) its headline verdict."""

    info: SweepInfo
    labels: Labels
    verdict: IndexVerdict | None = None


@dataclass(frozen=True)
class View:
    """What the index shows: sweeps with `tag` only (None: all), archived ones too when `archived`."""

    tag: str | None = None
    archived: bool = False

    def url(self, **changes) -> str:
        """The index's address with some of the view changed."""
        tag, archived = changes.get("tag", self.tag), changes.get("archived", self.archived)
        query = urlencode([*([("tag", tag)] if tag else []), *([("archived", "1")] if archived else [])])
        return INDEX + (f"?{query}" if query else "")

    def shows(self, row: IndexRow) -> bool:
        return (self.archived or not row.labels.archived) and (self.tag is None or self.tag in row.labels.tags)


def _label_form(sweep: str, back: str, action: str, button: str, title: str, tag: str = "", extra: str = "") -> str:
    """A form posting one change of `sweep`'s labels to /labels, coming back to `back`."""
    hidden = "".join(f'<input type="hidden" name="{name}" value="{escape(value)}">'
                     for name, value in (("sweep", sweep), ("back", back), *([("tag", tag)] if tag else [])))
    return (f'<form method="post" action="/labels" class="labels">{hidden}{extra}'
            f'<button type="submit" name="action" value="{action}" title="{escape(title)}">{escape(button)}</button>'
            "</form>")


def _tags(row: IndexRow, view: View) -> str:
    name = row.info.name
    chips = "".join(f'<span class="tag"><a href="{escape(view.url(tag=tag))}">{escape(tag)}</a>'
                    f'{_label_form(name, view.url(), "untag", "×", f"remove the tag {tag}", tag)}</span>'
                    for tag in row.labels.tags)
    field = f'<input name="tag" size="7" placeholder="tag" aria-label="a tag for {escape(name)}" required>'
    return chips + _label_form(name, view.url(), "tag", "+", f"tag {name}", extra=field)


def _verdict(verdict: IndexVerdict | None) -> str:
    if verdict is None:
        return '<td class="verdict"></td>'
    title = f' title="{escape(verdict.detail)}"' if verdict.detail else ""
    return f'<td class="verdict {verdict.kind}"{title}>{escape(verdict.text)}</td>'


def _row(row: IndexRow, view: View) -> str:
    info, archived = row.info, row.labels.archived
    link = f'<a href="/sweep/{quote(info.name)}">{escape(info.name)}</a>'
    done = 100 * info.n_done / info.n_cells if info.n_cells else 0
    bar = f'<span class="bar"><span style="width:{done:.0f}%"></span></span>'
    action = "unarchive" if archived else "archive"
    archive = _label_form(info.name, view.url(), action, action,
                          "show it in the index again" if archived else "hide it from the index (nothing is deleted)")
    return (f'<tr data-sweep="{escape(info.name)}" data-archived="{str(archived).lower()}">'
            f'<td><input type="checkbox" name="sweep" value="{escape(info.name)}" form="overlay" '
            f'aria-label="overlay {escape(info.name)}"></td><td>{link}</td>'
            f'<td class="text">{escape(info.question or "")}</td>'
            f'{_verdict(row.verdict)}<td class="tags">{_tags(row, view)}</td><td>{bar} {escape(info.progress())}</td>'
            f'<td class="state {info.state}">{info.state}</td><td>{archive}</td></tr>')


def _damage(lines: list[str]) -> str:
    items = "".join(f"<li><code>{escape(line)}</code></li>" for line in lines)
    return (f'<div class="status damaged"><p>Damaged files, left out of every sweep below (<code>harness db check '
            f'--repair</code> moves them aside):</p><ul>{items}</ul></div>') if lines else ""


def _filters(rows: list[IndexRow], view: View) -> str:
    hidden = sum(row.labels.archived for row in rows)
    parts = []
    if view.tag is not None:
        parts.append(f'tagged <span class="tag">{escape(view.tag)}</span> only '
                     f'(<a href="{escape(view.url(tag=None))}">all tags</a>)')
    if view.archived:
        parts.append('archived sweeps shown '
                     f'(<a id="archived-toggle" href="{escape(view.url(archived=False))}">hide them</a>)')
    elif hidden:
        parts.append(f'<a id="archived-toggle" href="{escape(view.url(archived=True))}">show {hidden} archived '
                     f'sweep{"s" if hidden != 1 else ""}</a>')
    return f'<p class="filters">{"; ".join(parts)}</p>' if parts else ""


def index_page(results: str, rows: list[IndexRow], damage: Sequence[str] = (), view: View = View()) -> str:
    """Every sweep the view shows with its question, headline verdict, tags, progress and state; a line per damaged
    file of the store; the sweeps' overlay form."""
    shown = [row for row in rows if view.shows(row)]
    body_rows = "".join(_row(row, view) for row in shown) or '<tr><td colspan="8">No sweep to show here.</td></tr>'
    running = any(row.info.state == RUNNING_STATE for row in shown)
    status = (f'<p class="status running"><span id="reload-state">this page reloads every {REFRESH_SECONDS} s while a '
              'sweep runs</span><button id="reload-toggle" type="button">pause reloading</button></p>'
              if running else "")
    body = (f"<h1>Sweeps</h1><p>Results store <code>{escape(results)}</code>.</p>{status}{_damage(list(damage))}"
            f"{_filters(rows, view)}"
            '<table class="sweeps"><thead><tr><th title="choose sweeps to overlay">overlay</th><th>sweep</th>'
            '<th>question</th><th>verdict</th><th>tags</th><th>progress</th><th>state</th><th></th></tr></thead>'
            f'<tbody>{body_rows}</tbody></table><form id="overlay" action="/overlay" method="get">'
            '<button type="submit">overlay the chosen sweeps</button> '
            '<span class="hint">their arms in the same figures, with one filter bar</span></form>')
    return shell("harness dashboard", body, reload=running)


def crumbs(*parts: str) -> str:
    """The line at the top of a dashboard page: a link to the index, then `parts` (HTML), each after a ›."""
    return f'<p class="crumbs"><a href="{INDEX}">all sweeps</a>{"".join(f" › {part}" for part in parts)}</p>'


def message_page(title: str, message: str) -> str:
    """A page that says why there is nothing to show."""
    return shell(title, f"{crumbs()}<h1>{escape(title)}</h1><p>{escape(message)}</p>")
