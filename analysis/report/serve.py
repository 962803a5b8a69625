"""Serving reports over HTTP with the standard library: `harness report --serve` (one page from disk) and
`harness dashboard` (every sweep of a store, `analysis.report.dashboard`).

`listen` binds before anything is written, so a port in use or a host that is not this machine's is one
clear error (AnalysisError: exit 2 in the CLI) instead of a traceback after the report was rewritten.
"""

from __future__ import annotations

import errno
import gzip
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from analysis.errors import AnalysisError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def check_port(port: int) -> None:
    """AnalysisError unless `port` is 0-65535 (0: a free one)."""
    if not 0 <= port <= 65535:
        raise AnalysisError(f"--port {port} is invalid: a port is 0-65535 (0 picks a free one).")


def listen(handler: type[BaseHTTPRequestHandler], host: str = DEFAULT_HOST,
           port: int = DEFAULT_PORT) -> ThreadingHTTPServer:
    """A server bound to (host, port) with `handler`; AnalysisError naming the fix when it cannot bind."""
    check_port(port)
    try:
        return ThreadingHTTPServer((host, port), handler)
    except socket.gaierror as err:
        raise AnalysisError(f"--host {host!r} is not a host name or address here ({err.strerror}).") from None
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise AnalysisError(f"--port {port} is in use on {host}: pick another, or --port 0 for a free "
                                "one.") from None
        if err.errno == errno.EADDRNOTAVAIL:
            raise AnalysisError(f"--host {host!r} is not an address of this machine; use 127.0.0.1 (then an SSH "
                                "tunnel) or 0.0.0.0 for every interface.") from None
        raise AnalysisError(f"cannot listen on {host}:{port}: {err.strerror or err}.") from None


class Replies(BaseHTTPRequestHandler):
    """A handler that answers with whole bodies, never cached (each reload sees the latest rewrite), gzipped
    when the browser accepts it (a report inlines 4.8 MB of plotly.js, 1.4 MB gzipped)."""

    def reply(self, body: bytes, status: HTTPStatus = HTTPStatus.OK, kind: str = "text/html; charset=utf-8") -> None:
        zipped = "gzip" in self.headers.get("Accept-Encoding", "")
        body = gzip.compress(body, compresslevel=5) if zipped else body
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        if zipped:
            self.send_header("Content-Encoding", "gzip")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args) -> None:  # a reload every few seconds would flood the terminal
        pass


def page_handler(page: Path) -> type[BaseHTTPRequestHandler]:
    """A handler answering `/` and `/<page name>` with `page`, read fresh from disk on every request."""
    page = Path(page)

    class Handler(Replies):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.split("?")[0] not in ("/", f"/{page.name}"):
                self.send_error(HTTPStatus.NOT_FOUND, "only the report is served here")
                return
            self.reply(page.read_bytes())

    return Handler


def make_server(page: Path, host: str = DEFAULT_HOST, port: int = 0) -> ThreadingHTTPServer:
    """A server answering `/` and `/<page name>` with `page`; port 0 picks a free one."""
    return listen(page_handler(page), host, port)
