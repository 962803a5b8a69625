"""`harness report --serve`: the report page on localhost, standard library only.

Only the page itself is served, fresh from disk on every request (no caching), so the reloads of a
running sweep's page pick up each rewrite the sweep's runner makes.
"""

from __future__ import annotations

from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def make_server(page: Path, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server answering `/` and `/<page name>` with `page`; port 0 picks a free one."""
    page = Path(page)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.split("?")[0] not in ("/", f"/{page.name}"):
                self.send_error(HTTPStatus.NOT_FOUND, "only the report is served here")
                return
            body = page.read_bytes()
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args) -> None:  # a reload every few seconds would flood the terminal
            pass

    return ThreadingHTTPServer((host, port), Handler)
