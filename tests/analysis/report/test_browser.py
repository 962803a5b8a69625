"""The report in a real browser (headless Chromium driven by selenium): it opens without console errors,
clicking a legend entry hides an arm in every figure, hovering shows a value with its runs, the seed filter and
the smoothing recompute the figures, clicking a run opens it, the tables sort, and at 1280 px the answer and the
compact table are in view with no horizontal scroll."""

import math
import shutil
import sys
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

import db
import synthetic
from analysis.report import write_report

sys.path.insert(0, str(Path(__file__).parent))
from browser import RUN_PANELS, console_errors, driver, move, point, run_panels, traces  # noqa: E402

pytestmark = pytest.mark.slow  # waits on processes or builds a shared store first

ARMS = {"baseline": (0.0, 0.003, 3), "rmsnorm": (-0.1, 0.003, 3), "softcap": (0.05, 0.003, 3)}
LABELS = {"rmsnorm": "QK-norm (RMS)"}
LRS = (1e-3, 3e-3, 1e-2)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """A finished sweep at three LRs with a plan that labels one arm; its report's path."""
    results = tmp_path_factory.mktemp("browser") / "results"
    finals = synthetic.write_planted(results, "qk", ARMS, lrs=LRS,
                                     lr_penalty=lambda lr: 0.05 * abs(math.log10(lr / 3e-3)), steps=40)
    cells = [{"arm": arm, "arm_label": LABELS.get(arm), "lr": lr, "seed": seed,
              "run_id": f"qk-{list(ARMS).index(arm)}-{lr}-{seed}"}
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


@pytest.mark.slow
def test_the_page_opens_without_console_errors_and_draws_every_figure(fresh):
    drawn = fresh.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('figure .plot'), function (p) {"
        " return [p.id, p.querySelectorAll('.main-svg').length > 0]; });")
    assert drawn and all(ok for _, ok in drawn), drawn
    assert len(drawn) == 6  # the seventh, the spike timeline, has no event here: one line instead of an empty box
    assert fresh.find_element(By.CSS_SELECTOR, "#fig-spikes .empty").text.startswith("Nothing to draw: no loss or "
                                                                                     "grad-norm spike")
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
    # and back, from the filter bar
    fresh.find_element(By.CSS_SELECTOR, '#arm-toggles input[data-arm="rmsnorm"]').click()
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
    title = fresh.find_element(By.CSS_SELECTOR, "#run-detail .run-title").text
    assert title.startswith(f"run {run_id}: softcap, LR 0.001, seed ")
    panels = run_panels(fresh)
    assert list(panels) == list(RUN_PANELS) and all(panel["traces"] and panel["points"] for panel in panels.values())


def test_a_run_opens_from_a_table_row_and_the_link_back_returns_there(fresh):
    fresh.find_element(By.CSS_SELECTOR, "#runs summary").click()
    link = fresh.find_elements(By.CSS_SELECTOR, "#runs a.run-link")[4]
    run_id = link.get_attribute("data-run")
    fresh.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
    link.click()
    assert fresh.execute_script("return location.hash") == f"#run={run_id}"
    assert fresh.find_element(By.CSS_SELECTOR, "#run-detail .run-title").text.startswith(f"run {run_id}: ")
    panels = run_panels(fresh)
    assert list(panels) == list(RUN_PANELS) and all(panel["traces"] and panel["points"] for panel in panels.values())
    facts = fresh.find_element(By.CSS_SELECTOR, "#run-detail .run-facts").text
    assert "seed" in facts and "final validation loss" in facts and "config (" in facts
    assert not fresh.find_element(By.ID, "run-page").is_displayed()  # a report on its own has no run pages
    fresh.find_element(By.CSS_SELECTOR, "#run-detail .run-back").click()
    assert fresh.execute_script("return location.hash") == ""
    assert not fresh.find_element(By.ID, "run-detail").is_displayed()
    top = fresh.execute_script("return arguments[0].getBoundingClientRect().top", link)
    assert 0 <= top <= fresh.execute_script("return window.innerHeight")  # back where it was opened


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
