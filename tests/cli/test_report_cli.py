import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from cli.main import main

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "results"
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.002, 2), "rmsnorm": (-0.1, 0.002, 2)}, steps=12)
    return path


def test_writes_the_report_where_asked_and_prints_its_path(results, tmp_path, capsys):
    out = tmp_path / "out" / "qk.html"
    assert main(["report", "qk", "--results", str(results), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == str(out)
    assert out.read_text().startswith("<!doctype html>")


def test_bad_baseline_is_one_line_and_exit_2(results, capsys):
    assert main(["report", "qk", "--results", str(results), "--baseline", "bse"]) == 2
    assert capsys.readouterr().err.strip() == ("harness report: error: baseline 'bse' is not an arm of sweep 'qk'; did "
                                               "you mean 'base'?")


@pytest.mark.slow
def test_serve_answers_on_localhost_until_interrupted(results):
    command = [sys.executable, "-m", "cli.main", "report", "qk", "--results", str(results), "--serve", "--port", "0",
               "--host", "localhost"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        path = server.stdout.readline().strip()
        banner = server.stdout.readline().strip()
        # localhost's address
        assert path.endswith("sweeps/qk/report.html") and banner.startswith("serving http://127.0.0.1:")
        url = banner.split()[1]
        with urllib.request.urlopen(url) as response:
            assert response.read() == Path(path).read_bytes()
    finally:
        server.send_signal(2)  # Ctrl-C
        server.wait()
    assert server.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_server_started_with_sigint_ignored_still_stops_on_ctrl_c_and_on_sigterm(results, stop):
    # A script's background job (`harness report S --serve &`) inherits SIGINT ignored from its shell.
    command = [sys.executable, "-m", "cli.main", "report", "qk", "--results", str(results), "--serve", "--port", "0"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        server.stdout.readline()
        assert server.stdout.readline().startswith("serving http://127.0.0.1:")
    finally:
        server.send_signal(stop)
        server.wait()
    assert server.returncode == 0


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_a_bad_port_is_one_line_and_exit_2_before_anything_is_written(results, tmp_path, capsys, port):
    out = tmp_path / "never.html"
    assert main(["report", "qk", "--results", str(results), "--out", str(out), "--serve", "--port", port]) == 2
    assert capsys.readouterr().err.strip() == (f"harness report: error: --port {port} is invalid: a port is 0-65535 (0 "
                                               "picks a free one).")
    assert not out.exists()


def test_a_port_in_use_is_one_line_and_exit_2_before_anything_is_written(results, tmp_path):
    out = tmp_path / "never.html"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "cli.main", "report", "qk", "--results", str(results), "--out",
                               str(out), "--serve", "--port", str(port)], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"harness report: error: --port {port} is in use on 127.0.0.1: pick another, or --port 0 "
                           "for a free one.\n")
    assert not out.exists()


def test_out_under_a_file_is_one_line_and_exit_2(results, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert main(["report", "qk", "--results", str(results), "--out", str(tmp_path / "file" / "r.html")]) == 2
    assert capsys.readouterr().err.strip().endswith("is a file, not a folder.")
