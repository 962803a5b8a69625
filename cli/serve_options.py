"""--host and --port, shared by `harness report --serve` and `harness dashboard`, and serving until Ctrl-C."""

from __future__ import annotations

import argparse
import signal

DEFAULT_HOST = "127.0.0.1"  # = analysis.report.serve.DEFAULT_HOST, without importing it for --help
DEFAULT_PORT = 8765


def add_serve_options(parser: argparse.ArgumentParser, what: str) -> None:
    """--host and --port for serving `what`."""
    parser.add_argument("--host", default=DEFAULT_HOST,
                        help=f"address to serve {what} on (default: {DEFAULT_HOST}, this machine only; from a laptop "
                        f"use an SSH tunnel: ssh -L {DEFAULT_PORT}:localhost:{DEFAULT_PORT} login-node; 0.0.0.0 serves "
                        "every interface, unauthenticated)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port (default: {DEFAULT_PORT}; 0 picks a free one)")


def _stop(signum, frame) -> None:
    raise KeyboardInterrupt


def serve_until_interrupted(server, path: str = "") -> None:
    """Print where the server answers, then serve until Ctrl-C or SIGTERM. Both are handled here, whatever the
    process inherited: a process started in the background by a script inherits SIGINT ignored, and a server
    left on a login node is ended with `kill`."""
    host, port = server.server_address[:2]
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:  # the banner too: whoever reads it may stop the server at once
        print(f"serving http://{host}:{port}/{path} (Ctrl-C to stop)", flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
