import threading
import urllib.error
import urllib.request

import pytest

from analysis.report.serve import make_server


@pytest.fixture
def served(tmp_path):
    page = tmp_path / "report.html"
    page.write_text("<p>one</p>")
    server = make_server(page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield page, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_serves_the_page_fresh_from_disk(served):
    page, url = served
    for path in ("/", "/report.html"):
        with urllib.request.urlopen(url + path) as response:
            assert response.read() == b"<p>one</p>"
            assert response.headers["Cache-Control"] == "no-store"
    page.write_text("<p>two</p>")  # the runner rewrote it
    with urllib.request.urlopen(url + "/report.html?reload") as response:
        assert response.read() == b"<p>two</p>"


def test_serves_nothing_else(served):
    _, url = served
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(url + "/../cells.parquet")
    assert err.value.code == 404
