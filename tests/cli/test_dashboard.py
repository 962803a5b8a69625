"""`harness dashboard`: the index of every sweep with its headline verdict, each sweep's live page, a run's page,
the overlay, and the labels form, over real HTTP from a real server process; a bad or busy port and a missing store
are one line and exit 2."""

import http.client
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

import db

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402

pytestmark = pytest.mark.slow  # waits on processes or builds a shared store first


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Sweep 'qk' (finished, with a question) and sweep 'live' (one run finished, one cell never started)."""
    path = tmp_path_factory.mktemp("dashboard") / "results"
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.002, 2), "rmsnorm": (-0.1, 0.002, 2)}, steps=12)
    synthetic.write_run(path, "l0", sweep="live", arm="base", seed=0, lr=1e-3, final=3.0, steps=12)
    db.write_sweep(path, "live", {"question": "Is it <b>live</b>?"},
                   [{"arm": "base", "lr": 1e-3, "seed": s, "run_id": f"l{s}"} for s in range(2)])
    return path


@pytest.fixture(scope="module")
def dashboard(results):
    server = subprocess.Popen([sys.executable, "-m", "cli.main", "dashboard", "--results", str(results), "--port", "0"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    banner = server.stdout.readline().strip()
    assert (banner.startswith("serving http://127.0.0.1:")
            and banner.endswith("/ (Ctrl-C to stop)")), server.stderr.read()
    yield banner.split()[1]
    server.send_signal(2)  # Ctrl-C
    deadline = time.monotonic() + 10
    while server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.returncode == 0


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read().decode()


def test_the_index_lists_every_sweep_with_its_question_progress_and_state(dashboard):
    page = get(dashboard)
    assert '<tr data-sweep="live" data-archived="false">' in page
    assert '<tr data-sweep="qk" data-archived="false">' in page
    assert "Is it &lt;b&gt;live&lt;/b&gt;?" in page and "1 of 2 cells; partial" in page and "4 of 4 cells" in page
    assert '<a href="/sweep/qk">qk</a>' in page and '<td class="state finished">finished</td>' in page
    assert '<td class="state running">running</td>' in page and 'data-reload="10"' in page  # a sweep runs: it reloads
    winner = re.search(r'<td class="verdict winner"[^>]*>rmsnorm wins: (-?[0-9.]+) nats</td>', page)
    assert winner and float(winner.group(1)) == pytest.approx(-0.1, abs=0.02)  # the planted effect
    assert '<td class="verdict waiting">only the baseline has finished runs</td>' in page  # live: one arm so far


def test_each_sweep_has_its_live_page_linking_back_and_two_overlay(dashboard):
    page = get(dashboard + "sweep/qk")
    assert (page.startswith("<!doctype html>") and '<section class="answer"' in page
            and "4 of 4 cells: finished." in page)
    assert 'data-index="/"><p class="crumbs"><a href="/">all sweeps</a></p>' in page
    live = get(dashboard + "sweep/live")
    assert 'data-reload="10"' in live and "1 of 2 cells; partial" in live
    pair = get(dashboard + "compare?a=qk&b=live")  # the old side-by-side address: the overlay now
    assert "<h1>Overlay: qk, live</h1>" in pair and '<a href="/">all sweeps</a>' in pair


def test_a_sweep_page_is_served_gzipped_to_a_browser_that_accepts_it(dashboard):
    request = urllib.request.Request(dashboard + "sweep/qk", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.headers["Content-Encoding"] == "gzip" and response.headers["Cache-Control"] == "no-store"


def test_an_unknown_sweep_is_a_404_page_naming_the_closest(dashboard):
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(dashboard + "sweep/kq", timeout=60)
    assert err.value.code == 404 and "did you mean &#x27;qk&#x27;?" in err.value.read().decode()


def test_a_run_has_its_own_page_and_several_sweeps_overlay(dashboard):
    page = get(dashboard + "run/qk-1-None-0")
    assert '<a href="/">all sweeps</a> › <a href="/sweep/qk">sweep qk</a> › run qk-1-None-0' in page
    assert '<a class="run-back" href="/sweep/qk">' in page and '"run":"qk-1-None-0"' in page
    assert 'id="harness-run"' in page and 'data-reload=' not in page  # a finished run's page does not reload
    running = get(dashboard + "run/l0?sweep=live")
    assert '"status":"completed"' in running and "sweep live" in running
    overlay = get(dashboard + "overlay?sweep=qk&sweep=live")
    assert '"name":"qk/rmsnorm"' in overlay and '"name":"live/base"' in overlay and 'id="plot-lr"' in overlay
    unknown = "no run &#x27;qk-1-None-9&#x27; in any sweep of this store; did you mean"
    one = "choose 2 to 6 sweeps to overlay (got 1)"
    for path, message in (("run/qk-1-None-9", unknown), ("overlay?sweep=qk", one)):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(dashboard + path, timeout=60)
        assert err.value.code == 404 and message in err.value.read().decode(), path


def post_labels(dashboard: str, origin: str | None = None, **form) -> tuple[int, str, str]:
    """POST the labels form; the status, the Location header and the body."""
    address = urllib.parse.urlsplit(dashboard)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
    headers = {"Content-Type": "application/x-www-form-urlencoded", **({"Origin": origin} if origin else {})}
    connection.request("POST", "/labels", urllib.parse.urlencode(form), headers)
    response = connection.getresponse()
    reply = (response.status, response.getheader("Location") or "", response.read().decode())
    connection.close()
    return reply


def test_labels_change_by_the_form_from_the_dashboards_own_pages_only(dashboard, results):
    own = dashboard.rstrip("/")
    foreign = post_labels(dashboard, "http://example.com", action="archive", sweep="qk")
    assert foreign[0] == 403 and not (results / "sweeps" / "qk" / "labels.json").exists()
    bad = post_labels(dashboard, own, action="tag", sweep="qk", tag="no spaces")
    assert bad[0] == 400 and "tag &#x27;no spaces&#x27; is invalid" in bad[2]
    unknown = post_labels(dashboard, own, action="tag", sweep="kq", tag="x")
    assert unknown[0] == 404 and "no such sweep" in unknown[2]
    done = post_labels(dashboard, own, action="tag", sweep="qk", tag="paper", back="/?tag=paper")
    assert done[:2] == (303, "/?tag=paper")
    assert post_labels(dashboard, own, action="archive", sweep="qk", back="//example.com/")[:2] == (303, "/")
    assert post_labels(dashboard, own, action="untag", sweep="qk", tag="x", back="/\\example.com/")[:2] == (303, "/")
    index = get(dashboard)
    assert 'data-sweep="qk"' not in index and 'show 1 archived sweep' in index  # archived: hidden by default
    shown = get(dashboard + "?archived=1&tag=paper")
    assert '<tr data-sweep="qk" data-archived="true">' in shown and 'data-sweep="live"' not in shown
    assert '<a href="/?tag=paper&amp;archived=1">paper</a>' in shown
    post_labels(dashboard, own, action="unarchive", sweep="qk")
    post_labels(dashboard, own, action="untag", sweep="qk", tag="paper")
    assert '<tr data-sweep="qk" data-archived="false">' in get(dashboard)


def _dashboard(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cli.main", "dashboard", *args], capture_output=True, text=True,
                          timeout=120)


def test_a_port_in_use_a_bad_port_and_a_missing_store_are_one_line_and_exit_2(results, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = _dashboard("--results", str(results), "--port", str(port))
    assert (busy.returncode, busy.stdout) == (2, "")
    assert busy.stderr == (f"harness dashboard: error: --port {port} is in use on 127.0.0.1: pick another, or --port 0 "
                           "for a free one.\n")
    bad = _dashboard("--results", str(results), "--port", "99999")
    assert bad.returncode == 2 and bad.stderr == ("harness dashboard: error: --port 99999 is invalid: a port is "
                                                  "0-65535 (0 picks a free one).\n")
    missing = _dashboard("--results", str(tmp_path / "none"), "--port", "0")
    assert missing.returncode == 2 and missing.stderr.startswith("harness dashboard: error: no results directory at ")
    assert len(missing.stderr.splitlines()) == 1
