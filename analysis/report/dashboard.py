"""`harness dashboard`: every sweep of a results store over HTTP, standard library only.

    /                  the index: each sweep's question, progress and state
    /sweep/<name>      the sweep's live report (the page `harness report` writes, rendered on request)
    /compare?a=X&b=Y   two sweeps side by side

A sweep's page is rendered when asked for and kept until its cell counts change, so the 10-second reloads of
a running sweep's page cost a render only after a cell finished; renders of one sweep never overlap.
"""

from __future__ import annotations

import threading
from http import HTTPStatus
from urllib.parse import parse_qs, unquote, urlsplit

from analysis.errors import AnalysisError
from db.errors import DbError
from errors import ConfigError
from analysis.report.index import index_page, message_page, side_by_side_page
from analysis.report.serve import DEFAULT_HOST, DEFAULT_PORT, Replies, listen


class Pages:
    """Rendered sweep pages, each kept with the cell counts it was rendered from."""

    def __init__(self, results_dir) -> None:
        self.results_dir = results_dir
        self._pages: dict[str, tuple[tuple, str]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def sweeps(self) -> tuple[list, list[str]]:
        """Every readable sweep's `SweepInfo`, by name, and a line per damaged file of the store (`store_damage`)."""
        from analysis.source import sweep_info

        con = _connect(self.results_dir)
        infos = [sweep_info(con, name) for (name,) in con.execute("SELECT sweep FROM sweeps ORDER BY sweep").fetchall()]
        damage = con.execute(
            "SELECT path || ': ' || kind || ': ' || problem || CASE WHEN sweep IS NOT NULL THEN '; sweep ' || sweep || "
            "' is left out' ELSE '; run ' || run_id || ' is damaged' END FROM store_damage").fetchall()
        return infos, [line for (line,) in damage]

    def page(self, sweep: str) -> str:
        """The sweep's report page (AnalysisError for an unknown sweep, or one with nothing to show)."""
        from analysis.report.write import render_report

        with self._guard:
            lock = self._locks.setdefault(sweep, threading.Lock())
        with lock:
            key = self._key(sweep)
            if sweep not in self._pages or self._pages[sweep][0] != key:
                self._pages[sweep] = (key, render_report(self.results_dir, sweep).page())
            return self._pages[sweep][1]

    def _key(self, sweep: str) -> tuple:
        row = _connect(self.results_dir).execute("SELECT * FROM sweeps WHERE sweep = ?", [sweep]).fetchone()
        return tuple(map(str, row)) if row else ()


def _connect(results_dir):
    """`db.connect`, its warnings about damaged files held back: the index page lists them (`store_damage`), and a
    sweep's page says what it cannot show."""
    import warnings

    import db

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.CorruptShardWarning)
        return db.connect(results_dir)


def handler(pages: Pages) -> type[Replies]:
    """The dashboard's request handler over `pages`."""

    class Handler(Replies):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urlsplit(self.path)
            try:
                if url.path == "/":
                    self.reply(index_page(str(pages.results_dir), *pages.sweeps()).encode())
                elif url.path.startswith("/sweep/"):
                    self.reply(pages.page(unquote(url.path[len("/sweep/"):])).encode())
                elif url.path == "/compare":
                    query = parse_qs(url.query)
                    self.reply(side_by_side_page(query.get("a", [""])[0], query.get("b", [""])[0]).encode())
                else:
                    self.reply(message_page("Not found", f"No page {url.path}.").encode(), HTTPStatus.NOT_FOUND)
            except AnalysisError as err:
                self.reply(message_page("Nothing to show", str(err)).encode(), HTTPStatus.NOT_FOUND)
            except (ConfigError, DbError) as err:  # a damaged file the page needs, or a store with no readable run
                self.reply(message_page("Cannot show this", str(err)).encode(), HTTPStatus.INTERNAL_SERVER_ERROR)

    return Handler


def make_dashboard(results_dir, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
    """The dashboard's server over the store at `results_dir`, bound (AnalysisError when it cannot be)."""
    return listen(handler(Pages(results_dir)), host, port)
