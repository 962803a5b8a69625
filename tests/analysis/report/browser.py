"""A real browser for the report tests: Debian's headless Chromium driven through chromium-driver by selenium.

Installed the way the SLURM fixture installs SLURM: `apt-get install -y chromium chromium-driver` (as root)
and `pip install selenium` when missing. Under CI=true the tests must run: a browser that cannot be had
fails them instead of skipping. Selenium gets the driver and the browser explicitly, or its selenium-manager
would try to download one (TOOLCHAIN.md, "Driving a real browser offline").
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from system_packages import install

PACKAGES = ("chromium", "chromium-driver")
DRIVER, BROWSER = "/usr/bin/chromedriver", "/usr/bin/chromium"


def _install() -> str | None:
    """Why no browser can be driven here, after trying to install what is missing; None when one can."""
    missing = install(PACKAGES, lambda: os.path.exists(DRIVER) and os.path.exists(BROWSER))
    if missing:
        return missing
    try:
        import selenium  # noqa: F401
    except ImportError:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "selenium>=4.30,<5"], capture_output=True,
                       timeout=600)
    try:
        import selenium  # noqa: F401,F811
    except ImportError:
        return "selenium is missing and pip could not install it"
    return None


def driver(width: int = 1280, height: int = 900):
    """A headless Chromium session at `width` × `height` CSS pixels, its console kept for `console_errors`."""
    missing = _install()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true: the browser tests must run, but {missing}")
        pytest.skip(missing)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = BROWSER
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                 f"--window-size={width},{height}", "--force-device-scale-factor=1"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def console_errors(session) -> list[str]:
    """The page's console messages at level SEVERE (script errors, failed loads)."""
    return [entry["message"] for entry in session.get_log("browser") if entry["level"] == "SEVERE"]


def traces(session, plot: str, arm: str) -> list[dict]:
    """The traces of `arm` (their `meta`) in the figure `plot`: visible, mode, customdata, y."""
    return session.execute_script(
        "var arm = arguments[1]; return document.getElementById(arguments[0]).data.filter(function (t) {"
        " return t.meta === arm; }).map(function (t) {"
        " return {visible: t.visible, mode: t.mode, customdata: t.customdata, y: t.y}; });", plot, arm)


def point(session, plot: str, arm: str, index: int, mode: str = "lines+markers") -> tuple[float, float]:
    """Viewport coordinates of point `index` of the arm's trace with `mode` (scrolled into view first)."""
    session.execute_script("document.getElementById(arguments[0]).scrollIntoView({block: 'center'});", plot)
    return session.execute_script("""
        var gd = document.getElementById(arguments[0]), box = gd.getBoundingClientRect();
        var arm = arguments[1], mode = arguments[3];
        var t = gd._fullData.filter(function (t) { return t.meta === arm && t.mode === mode; })[0];
        var xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, x = t.x[arguments[2]], y = t.y[arguments[2]];
        return [box.left + xa._offset + xa.l2p(xa.d2l(x)), box.top + ya._offset + ya.l2p(ya.d2l(y))];
    """, plot, arm, index, mode)


def move(session, x: float, y: float, click: bool = False) -> None:
    """The mouse to viewport point (x, y), and a click there if asked."""
    from selenium.webdriver.common.actions.action_builder import ActionBuilder

    builder = ActionBuilder(session)
    builder.pointer_action.move_to_location(int(x), int(y))
    if click:
        builder.pointer_action.click()
    builder.perform()


RUN_PANELS = ("train_loss", "val_loss", "lr", "grad_norm", "attention", "output_logit_max_abs", "output_log_z_mean")


def run_panels(session) -> dict[str, dict]:
    """The one-run view's panels by signal, in the page's order: how many traces and points each drew, its y axis
    type and its traces' names."""
    found = session.execute_script("""
        return Array.prototype.map.call(document.querySelectorAll("#run-detail .run-panel"), function (cell) {
            var plot = cell.querySelector(".plot"), data = plot && plot.data ? plot.data : [];
            return {signal: cell.dataset.signal, traces: data.length, names: data.map(function (t) { return t.name; }),
                points: data.reduce(function (n, t) { return n + t.x.length; }, 0),
                yaxis: plot && plot._fullLayout ? plot._fullLayout.yaxis.type : null};
        });""")
    return {panel.pop("signal"): panel for panel in found}  # a JSON object would come back with its keys sorted
