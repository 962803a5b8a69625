"""The report in a real browser (headless Chromium driven by selenium): it opens without console errors,
clicking a legend entry hides an arm in every figure, hovering shows a value with its runs, the seed filter and
the smoothing recompute the figures, clicking a run opens it, the tables sort, and at 1280 px the answer and the
compact table are in view with no horizontal scroll."""

import math
import shutil
import sys
from pathlib import Path

import pytest
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import db
import synthetic
from analysis.report import write_report

sys.path.insert(0, str(Path(__file__).parent))
from browser import console_errors, driver  # noqa: E402

ARMS = {"baseline": (0.0, 0.003, 3), "rmsnorm": (-0.1, 0.003, 3), "softcap": (0.05, 0.003, 3)}
LABELS = {"rmsnorm": "QK-norm (RMS)"}
LRS = (1e-3, 3e-3, 1e-2)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A finished sweep at three LRs with a plan that labels one arm; its report's path."""
    results = tmp_path_factory.mktemp("browser") / "results"
    finals = synthetic.write_planted(results, "qk", ARMS, lrs=LRS, lr_penalty=lambda lr: 0.05 * abs(math.log10(lr / 3e-3)), steps=40)
    cells = [{"arm": arm, "arm_label": LABELS.get(arm), "lr": lr, "seed": seed, "run_id": f"qk-{list(ARMS).index(arm)}-{lr}-{seed}"}
             for arm, lr, seed in finals]
    db.write_sweep(results, "qk", {"question": "Does QK-norm beat soft-capping?", "baseline": "baseline"}, cells)
    return write_report(results, "qk")


@pytest.fixture(scope="module")
def session(page):
    browser = driver()
    browser.get(page.as_uri())
    yield browser
    browser.quit()


@pytest.fixture
def fresh(session, page):
    session.get(page.as_uri())
    return session


def traces(session, plot: str, arm: str) -> list[dict]:
    return session.execute_script(
        "var arm = arguments[1]; return document.getElementById(arguments[0]).data.filter(function (t) { return t.meta === arm; })"
        ".map(function (t) { return {visible: t.visible, mode: t.mode, customdata: t.customdata, y: t.y}; });", plot, arm)


def point(session, plot: str, arm: str, index: int, mode: str = "lines+markers") -> tuple[float, float]:
    """Viewport coordinates of point `index` of the arm's trace with `mode` (scrolled into view first)."""
    session.execute_script("document.getElementById(arguments[0]).scrollIntoView({block: 'center'});", plot)
    return session.execute_script("""
        var gd = document.getElementById(arguments[0]), box = gd.getBoundingClientRect(), arm = arguments[1], mode = arguments[3];
        var t = gd._fullData.filter(function (t) { return t.meta === arm && t.mode === mode; })[0];
        var xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, x = t.x[arguments[2]], y = t.y[arguments[2]];
        return [box.left + xa._offset + xa.l2p(xa.d2l(x)), box.top + ya._offset + ya.l2p(ya.d2l(y))];
    """, plot, arm, index, mode)


def move(session, x: float, y: float, click: bool = False) -> None:
    """The mouse to viewport point (x, y), and a click there if asked."""
    builder = ActionBuilder(session)
    builder.pointer_action.move_to_location(int(x), int(y))
    if click:
        builder.pointer_action.click()
    builder.perform()


@pytest.mark.slow
def test_the_page_opens_without_console_errors_and_draws_every_figure(fresh):
    drawn = fresh.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('.plot:not(#plot-run)'), function (p) {"
        " return [p.id, p.querySelectorAll('.main-svg').length > 0]; });")
    assert drawn and all(ok for _, ok in drawn), drawn
    assert len(drawn) == 6  # the seventh, the spike timeline, has no event here: one line instead of an empty box
    assert fresh.find_element(By.CSS_SELECTOR, "#fig-spikes .empty").text.startswith("Nothing to draw: no loss or grad-norm spike")
    assert console_errors(fresh) == []


def test_clicking_a_legend_entry_hides_the_arm_in_every_figure(fresh):
    entry = [e for e in fresh.find_elements(By.CSS_SELECTOR, "#plot-lr .legend .traces") if e.text == "QK-norm (RMS)"]
    assert len(entry) == 1
    fresh.execute_script("arguments[0].scrollIntoView({block: 'center'});", entry[0])
    entry[0].find_element(By.CSS_SELECTOR, ".legendtoggle").click()
    for plot in ("plot-lr", "plot-curves", "plot-attention", "plot-cost"):
        assert {t["visible"] for t in traces(fresh, plot, "rmsnorm")} == {"legendonly"}, plot
        assert {t["visible"] for t in traces(fresh, plot, "softcap")} == {True}, plot
    assert not fresh.find_element(By.CSS_SELECTOR, '#arm-toggles input[data-arm="rmsnorm"]').is_selected()
    fresh.find_element(By.CSS_SELECTOR, '#arm-toggles input[data-arm="rmsnorm"]').click()  # and back, from the filter bar
    assert {t["visible"] for t in traces(fresh, "plot-attention", "rmsnorm")} == {True}


def test_hovering_a_point_shows_its_value_its_seed_count_and_its_runs(fresh):
    x, y = point(fresh, "plot-lr", "rmsnorm", 1)  # LR 3e-3
    move(fresh, x, y)
    text = fresh.find_element(By.CSS_SELECTOR, "#plot-lr .hoverlayer").text
    mean = traces(fresh, "plot-lr", "rmsnorm")[0]["y"][1]
    assert "QK-norm (RMS)" in text and f"{mean:.4g}" in text and "3 seeds, 0 diverged" in text
    assert "qk-1-0.003-0" in text and "qk-1-0.003-2" in text


def test_the_seed_filter_and_the_smoothing_recompute_means_and_bands(fresh):
    before = traces(fresh, "plot-lr", "rmsnorm")[0]["customdata"]
    assert [row[0] for row in before] == [3, 3, 3]
    for seed in ("1", "2"):
        fresh.find_element(By.CSS_SELECTOR, f'#seed-toggles input[data-seed="{seed}"]').click()
    after = traces(fresh, "plot-lr", "rmsnorm")[0]["customdata"]
    assert [row[0] for row in after] == [1, 1, 1] and all(row[2] == row[3] for row in after)  # one seed: no band
    smoothed = [t for t in traces(fresh, "plot-curves", "rmsnorm") if t["mode"] == "lines" and t["customdata"]][0]["y"]
    slider = fresh.find_element(By.ID, "ema")
    slider.send_keys(Keys.HOME)  # 0: no smoothing
    assert fresh.find_element(By.ID, "ema-value").text == "0"
    raw = [t for t in traces(fresh, "plot-curves", "rmsnorm") if t["mode"] == "lines" and t["customdata"]][0]["y"]
    assert raw[0] == pytest.approx(synthetic.INITIAL_LOSS + 0.02 - 0.0, abs=0.2) and raw[5] < smoothed[5]


def test_clicking_a_run_opens_its_curves(fresh):
    x, y = point(fresh, "plot-lr", "softcap", 0, mode="markers")
    runs = [t for t in traces(fresh, "plot-lr", "softcap") if t["mode"] == "markers" and t["customdata"]]
    run_id = runs[-1]["customdata"][0][0]
    move(fresh, x, y, click=True)
    assert fresh.find_element(By.ID, "run-info").text.startswith(f"run {run_id}: softcap, LR 0.001, seed ")
    assert fresh.find_elements(By.CSS_SELECTOR, "#plot-run .main-svg")


def test_the_tables_sort_on_a_header_click(fresh):
    header = [th for th in fresh.find_elements(By.CSS_SELECTOR, "#details th") if th.text == "mean"][0]
    fresh.execute_script("arguments[0].scrollIntoView({block: 'center'});", header)
    header.click()
    first = fresh.find_element(By.CSS_SELECTOR, "#details tbody tr td").text
    assert first == "QK-norm (RMS)"  # the lowest mean sorts first


@pytest.mark.slow
def test_at_1280_px_the_answer_and_the_compact_table_need_no_horizontal_scroll(fresh, tmp_path):
    fresh.set_window_size(1280, 1000)
    fresh.get(fresh.current_url)
    boxes = fresh.execute_script("""
        return ['#answer .lead', '#answer .headlines', '#compact table', '#compact'].map(function (s) {
            var r = document.querySelector(s).getBoundingClientRect(); return [s, r.left, r.right, r.top]; });""")
    width = fresh.execute_script("return document.documentElement.clientWidth")
    assert width <= 1280 and fresh.execute_script("return document.documentElement.scrollWidth") <= width
    for selector, left, right, top in boxes:
        assert 0 <= left and right <= width, (selector, left, right)
    assert boxes[2][3] < 1000  # the compact table starts within the first screen
    shot = tmp_path / "answer-1280.png"
    fresh.save_screenshot(str(shot))
    if (keep := Path("/tmp/harness-report-shots")).is_dir():  # to look at it: mkdir /tmp/harness-report-shots
        shutil.copy(shot, keep / shot.name)
    assert shot.stat().st_size > 10_000
