"""`serve_until_interrupted`: a server stopped by SIGTERM as soon as its banner is read closes its socket and
restores the signal handlers it replaced. In a fresh interpreter: a KeyboardInterrupt that escaped would stop
pytest itself."""

import subprocess
import sys

STOPPED_AT_THE_BANNER = """
import os, signal, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from cli.serve_options import serve_until_interrupted

class Reader:
    '''The banner's reader, which stops the server the moment it reads it.'''
    line = ""
    def write(self, text):
        sys.__stdout__.write(text)
        self.line += text
        if self.line.startswith("serving") and self.line.endswith("\\n"):
            os.kill(os.getpid(), signal.SIGTERM)
    def flush(self):
        sys.__stdout__.flush()

server = HTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
sys.stdout = Reader()
serve_until_interrupted(server)
sys.stdout = sys.__stdout__
print(server.socket.fileno() == -1, signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
"""


def test_a_server_stopped_as_its_banner_is_read_closes_and_restores_the_handlers():
    done = subprocess.run([sys.executable, "-c", STOPPED_AT_THE_BANNER], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    banner, closed = done.stdout.splitlines()
    assert banner.startswith("serving http://127.0.0.1:") and closed == "True True"
