"""The report in a real browser: Debian's headless Chromium, installed here with apt-get when missing.

Under CI=true the test must run: a missing browser that cannot be installed fails it instead of skipping.
"""

import os
import re
import shutil
import subprocess

import numpy as np
import pytest
from matplotlib import image

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000",
]
# Appended to a copy of the page: records what loaded and sorts the summary by `mean`, for --dump-dom to show.
PROBE = """<script>
window.addEventListener("load", function () {
  var images = Array.prototype.slice.call(document.images);
  var drawn = images.filter(function (i) { return i.complete && i.naturalWidth > 100; }).length;
  document.body.setAttribute("data-images", drawn + "/" + images.length);
  var header = Array.prototype.find.call(document.querySelectorAll("table.sortable th"), function (th) { return th.textContent === "mean"; });
  header.click();
  document.body.setAttribute("data-first-arm", document.querySelector("table.sortable tbody td").textContent);
});
</script>"""


def _install() -> str | None:
    """chromium's path, after `apt-get update && apt-get install chromium` if it is missing and we are root."""
    if shutil.which("chromium") is None and shutil.which("apt-get") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, timeout=600)
        subprocess.run(["apt-get", "install", "-y", "chromium"], env=env, capture_output=True, timeout=1200)
    return shutil.which("chromium")


@pytest.fixture(scope="module")
def chromium():
    path = _install()
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true: the headless-Chromium test must run, but chromium is missing and apt-get could not install it")
        pytest.skip("chromium is missing and cannot be installed here (needs root and apt-get)")
    return path


def _run(chromium, tmp_path, page, *extra) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=120)


def _console(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if ":CONSOLE" in line]


def test_the_console_check_catches_errors(chromium, tmp_path):
    page = tmp_path / "broken.html"
    page.write_text("<!doctype html><body><script>console.error('planted'); notDefined();</script></body>")
    messages = _console(_run(chromium, tmp_path, page, "--dump-dom"))
    assert any("planted" in m for m in messages) and any("notDefined" in m for m in messages)


def test_report_opens_without_console_errors_and_its_table_sorts(chromium, planted_report, tmp_path):
    page = tmp_path / "probed.html"
    page.write_text(planted_report.read_text().replace("</body>", PROBE + "</body>"))
    result = _run(chromium, tmp_path, page, "--dump-dom")
    assert _console(result) == []
    assert re.search(r'data-images="7/7"', result.stdout)
    assert re.search(r'data-first-arm="better"', result.stdout)  # the lowest mean sorts first


def test_screenshot_has_ink_in_the_figures(chromium, planted_report, tmp_path):
    shot = tmp_path / "shot.png"
    result = _run(chromium, tmp_path, planted_report, f"--screenshot={shot}", "--window-size=1280,5000")
    assert _console(result) == [] and shot.is_file()
    pixels = image.imread(shot)[..., :3]
    coloured = (pixels.max(axis=-1) - pixels.min(axis=-1)) > 0.25  # the arms' lines, bands and bars
    assert (pixels.min(axis=-1) < 0.5).mean() > 0.01 and coloured.mean() > 0.005
    rows = np.flatnonzero(coloured.any(axis=1))
    assert rows.max() - rows.min() > 2500  # colour all the way down the page, not only in the first figure
