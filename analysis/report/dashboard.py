"""`harness dashboard`: every sweep of a results store over HTTP, standard library only.

    /                          the index: each sweep's question, headline verdict, tags, progress and state
                               (?tag=T: that tag's sweeps only; ?archived=1: archived sweeps too)
    /sweep/<name>              the sweep's live report (the page `harness report` writes, rendered on request)
    /run/<run_id>?sweep=S      one run: every signal it recorded, while it trains too
    /overlay?sweep=A&sweep=B   several sweeps' arms in the same figures, one filter bar for all
    /compare?a=X&b=Y           the overlay of X and Y (the address of the side-by-side page it replaced)
    POST /labels               tag, untag, archive or unarchive a sweep (the index's forms), then back

A sweep's page and its headline verdict are computed when asked for and kept until its cell counts change, so the
10-second reloads of a running sweep's page and of the index cost a computation only after a cell finished;
computations of one sweep never overlap. A POST is answered only from a page of the dashboard itself (its `Origin`
is the dashboard's), so another site open in the browser cannot change labels.
"""

from __future__ import annotations

import threading
from http import HTTPStatus
from typing import Callable
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

from analysis.errors import AnalysisError
from analysis.report.index import INDEX, IndexRow, View, index_page, message_page
from analysis.report.serve import DEFAULT_HOST, DEFAULT_PORT, Replies, listen
from db.errors import DbError
from errors import ConfigError

LABEL_ACTIONS = {"tag": {}, "untag": {}, "archive": {"archived": True}, "unarchive": {"archived": False}}
FORM_LIMIT = 4096  # bytes of a posted form: a sweep name, a tag and where to go back


class Pages:
    """Rendered sweep pages and headline verdicts, each kept with the cell counts it was computed from."""

    def __init__(self, results_dir) -> None:
        self.results_dir = results_dir
        self._kept: dict[tuple[str, str], tuple[tuple, object]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def index(self, view: View) -> str:
        """The index page: every sweep with its labels, and the headline verdict of each one the view shows."""
        from analysis.reading.source import sweep_info
        from analysis.report.index_verdict import sweep_verdict
        from db.labels import Labels, every_label

        con = connect(self.results_dir)
        labels, damaged = every_label(self.results_dir)
        rows = []
        for found in con.execute("SELECT * FROM sweeps ORDER BY sweep").fetchall():
            name, key = found[0], tuple(map(str, found))
            row = IndexRow(sweep_info(con, name), labels.get(name, Labels()))
            if view.shows(row):
                verdict = self._cached("verdict", name, key, lambda: sweep_verdict(self.results_dir, name))
                row = IndexRow(row.info, row.labels, verdict)
            rows.append(row)
        damage = con.execute(
            "SELECT path || ': ' || kind || ': ' || problem || CASE WHEN sweep IS NOT NULL THEN '; sweep ' || sweep || "
            "' is left out' ELSE '; run ' || run_id || ' is damaged' END FROM store_damage").fetchall()
        return index_page(str(self.results_dir), rows, [line for (line,) in damage] + damaged, view)

    def page(self, sweep: str) -> str:
        """The sweep's report page (AnalysisError for an unknown sweep, or one with nothing to show)."""
        from analysis.report.write import render_report

        return self._cached("page", sweep, self._key(sweep), lambda: render_report(self.results_dir, sweep).page(INDEX))

    def _cached(self, kind: str, sweep: str, key: tuple, compute: Callable[[], object]):
        """`compute()`'s value for the sweep, computed again only when its cell counts (`key`) change."""
        with self._guard:
            lock = self._locks.setdefault(sweep, threading.Lock())
        with lock:
            kept = self._kept.get((kind, sweep))
            if kept is None or kept[0] != key:
                kept = self._kept[(kind, sweep)] = (key, compute())
            return kept[1]

    def _key(self, sweep: str) -> tuple:
        row = connect(self.results_dir).execute("SELECT * FROM sweeps WHERE sweep = ?", [sweep]).fetchone()
        return tuple(map(str, row)) if row else ()


def connect(results_dir):
    """`db.connect`, its warnings about damaged files held back: the index page lists them (`store_damage`), and a
    sweep's page says what it cannot show."""
    import warnings

    import db

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.CorruptShardWarning)
        return db.connect(results_dir)


def _back(value: str) -> str:
    """Where a posted form goes back to: a page of the dashboard (a path, never another site: browsers take //host
    and /\\host for one), else the index."""
    return value if value.startswith("/") and value[1:2] not in ("/", "\\") else INDEX


class DashboardHandler(Replies):
    """The dashboard's requests over `pages` (a subclass per server sets it: http.server makes a handler per
    request from a class)."""

    pages: Pages

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        self.answer(lambda: self._get(url.path, query))

    def _get(self, path: str, query: dict) -> None:
        if path == "/":
            view = View(query.get("tag", [None])[0], query.get("archived", [""])[0] == "1")
            self.reply(self.pages.index(view).encode())
        elif path.startswith("/sweep/"):
            self.reply(self.pages.page(unquote(path[len("/sweep/"):])).encode())
        elif path.startswith("/run/"):
            from analysis.report.run_page import run_page

            sweep = query.get("sweep", [None])[0]
            run_id = unquote(path[len("/run/"):])
            self.reply(run_page(self.pages.results_dir, connect(self.pages.results_dir), run_id, sweep).encode())
        elif path == "/overlay":
            from analysis.report.overlay import overlay_page

            self.reply(overlay_page(self.pages.results_dir, query.get("sweep", [])).encode())
        elif path == "/favicon.ico":  # browsers ask for it on every page: none, rather than a 404 in the console
            self.send_response(HTTPStatus.NO_CONTENT)
            self.end_headers()
        elif path == "/compare":
            sweeps = [query.get(side, [""])[0] for side in ("a", "b")]
            self.redirect("/overlay?" + urlencode([("sweep", sweep) for sweep in sweeps]))
        else:
            self.reply(message_page("Not found", f"No page {path}.").encode(), HTTPStatus.NOT_FOUND)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.answer(self._post)

    def _post(self) -> None:
        from db.labels import relabel

        origin = self.headers.get("Origin")
        if urlsplit(self.path).path != "/labels":
            self.reply(message_page("Not found", f"No form {self.path}.").encode(), HTTPStatus.NOT_FOUND)
            return
        if origin is not None and urlsplit(origin).netloc != self.headers.get("Host"):
            refused = message_page("Refused", "Labels change only from the dashboard's own self.pages.")
            self.reply(refused.encode(), HTTPStatus.FORBIDDEN)
            return
        declared = self.headers.get("Content-Length", "")
        length = int(declared) if declared.isdigit() else 0
        form = parse_qs(self.rfile.read(min(length, FORM_LIMIT)).decode(errors="replace"))
        field = {name: values[0] for name, values in form.items()}
        action, sweep, tag = field.get("action", ""), field.get("sweep", ""), field.get("tag", "").strip()
        if action not in LABEL_ACTIONS or sweep not in _sweeps(self.pages.results_dir):
            raise AnalysisError(f"cannot {action or 'change'} sweep {sweep!r}: no such sweep or change.")
        tags = [tag] if action in ("tag", "untag") else []
        try:
            relabel(self.pages.results_dir, sweep, add=tags if action == "tag" else [],
                    remove=tags if action == "untag" else [], **LABEL_ACTIONS[action])
        except DbError as err:  # a bad tag, or a damaged labels file (left as it is)
            self.reply(message_page("Labels not changed", str(err)).encode(), HTTPStatus.BAD_REQUEST)
            return
        self.redirect(_back(field.get("back", INDEX)))

    def answer(self, respond: Callable[[], None]) -> None:
        """`respond()`, its user-facing errors as a page that says what went wrong."""
        try:
            respond()
        except AnalysisError as err:
            self.reply(message_page("Nothing to show", str(err)).encode(), HTTPStatus.NOT_FOUND)
        except (ConfigError, DbError) as err:  # a damaged file the page needs, a store with no readable run
            self.reply(message_page("Cannot show this", str(err)).encode(), HTTPStatus.INTERNAL_SERVER_ERROR)

    def redirect(self, where: str) -> None:
        self.send_response(HTTPStatus.SEE_OTHER)
        self.send_header("Location", where)
        self.send_header("Content-Length", "0")
        self.end_headers()


def handler(pages: Pages) -> type[Replies]:
    """The dashboard's request handler over `pages`."""
    return type("Handler", (DashboardHandler,), {"pages": pages})


def _sweeps(results_dir) -> set[str]:
    return {name for (name,) in connect(results_dir).execute("SELECT sweep FROM sweeps").fetchall()}


def make_dashboard(results_dir, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
    """The dashboard's server over the store at `results_dir`, bound (AnalysisError when it cannot be)."""
    return listen(handler(Pages(results_dir)), host, port)
