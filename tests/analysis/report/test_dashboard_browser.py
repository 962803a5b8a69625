"""The dashboard in a real browser (headless Chromium driven by selenium, a real server on a free port): the index
shows each sweep's headline verdict, tags and archives sweeps through its forms and filters by them; the overlay
draws two sweeps' arms in the same figures and its filter bar acts on both; a run opens on its own page from a
figure point and from a sweep page's table row, every panel drawn, and its links go back."""

import re
import sys
import threading
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import WebDriverWait

import synthetic
from analysis.report.dashboard import make_dashboard
from db.labels import read_labels

sys.path.insert(0, str(Path(__file__).parent))
from browser import RUN_PANELS, console_errors, driver, move, point, run_panels, traces  # noqa: E402

pytestmark = pytest.mark.slow  # each page inlines plotly.js (4.8 MB); the index computes three verdicts
LRS = (1e-3, 3e-3)
EFFECT = -0.1  # rmsnorm's planted effect in sweep qk: the oracle of its verdict


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Sweep qk (rmsnorm planted 0.1 nats better), caps (softcap planted 0.08 worse) and old (no difference); every
    run with a loss spike at step 12 and output logits growing 30-fold (decades: log axes)."""
    path = tmp_path_factory.mktemp("dashboard-browser") / "results"
    runs = {"lrs": LRS, "steps": 40, "spikes": (12,), "logit_growth": 30.0}
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.003, 3), "rmsnorm": (EFFECT, 0.003, 3)}, **runs)
    synthetic.write_planted(path, "caps", {"base": (0.0, 0.003, 3), "softcap": (0.08, 0.003, 3)}, rng_seed=1, **runs)
    synthetic.write_planted(path, "old", {"base": (0.0, 0.003, 3), "same": (0.0, 0.003, 3)}, rng_seed=2, **runs)
    return path


@pytest.fixture(scope="module")
def site(results):
    """The dashboard's address, served from this process."""
    server = make_dashboard(results, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def session():
    browser = driver()
    yield browser
    browser.quit()


def rows(session) -> dict[str, dict]:
    """The index's rows by sweep: verdict text and class, tags, archived."""
    return session.execute_script("""
        var found = {};
        document.querySelectorAll("table.sweeps tbody tr[data-sweep]").forEach(function (tr) {
            var verdict = tr.querySelector("td.verdict");
            found[tr.dataset.sweep] = {verdict: verdict.textContent, kind: verdict.className,
                archived: tr.dataset.archived,
                tags: Array.prototype.map.call(tr.querySelectorAll(".tag a"), function (a) { return a.textContent; })};
        });
        return found;""")


def in_row(session, sweep: str, selector: str):
    return session.find_element(By.CSS_SELECTOR, f'tr[data-sweep="{sweep}"] {selector}')


def follow(session, element) -> None:
    """Click a link or a form's button and wait for the page it leads to: first for the page clicked on to go (until
    then it is complete and has its h1 too; an unarchive read back before its POST was served failed that way)."""
    page = session.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(session, 120).until(staleness_of(page))
    WebDriverWait(session, 120).until(lambda s: s.execute_script("return document.readyState") == "complete"
                                      and s.find_elements(By.CSS_SELECTOR, "h1"))


def test_the_index_shows_verdicts_and_tags_and_archives_sweeps(session, site, results):
    session.get(site + "/")
    shown = rows(session)
    assert set(shown) == {"qk", "caps", "old"}
    found = re.fullmatch(r"rmsnorm wins: (-?[0-9.]+) nats", shown["qk"]["verdict"])
    assert found and float(found.group(1)) == pytest.approx(EFFECT, abs=0.02), shown["qk"]
    assert "winner" in shown["qk"]["kind"]
    assert shown["caps"]["verdict"].startswith("no arm resolved better") and "worse" in shown["caps"]["verdict"]
    assert shown["old"]["verdict"].startswith("no arm resolved better")  # planted: no difference

    in_row(session, "caps", 'input[name="tag"]').send_keys("paper")
    follow(session, in_row(session, "caps", 'button[value="tag"]'))
    assert rows(session)["caps"]["tags"] == ["paper"] and read_labels(results, "caps").tags == ("paper",)
    follow(session, in_row(session, "caps", ".tag a"))  # the tag's own view: its sweeps only
    assert parse_qs(urlsplit(session.current_url).query) == {"tag": ["paper"]} and set(rows(session)) == {"caps"}

    session.get(site + "/")
    follow(session, in_row(session, "old", 'button[value="archive"]'))
    assert set(rows(session)) == {"qk", "caps"} and read_labels(results, "old").archived
    toggle = session.find_element(By.ID, "archived-toggle")
    assert toggle.text == "show 1 archived sweep"
    toggle.click()
    shown = rows(session)
    assert set(shown) == {"qk", "caps", "old"} and shown["old"]["archived"] == "true"
    follow(session, in_row(session, "old", 'button[value="unarchive"]'))
    assert not read_labels(results, "old").archived
    session.find_element(By.ID, "archived-toggle").click()  # "hide them": the default view, old back in it
    assert set(rows(session)) == {"qk", "caps", "old"} and not session.find_elements(By.ID, "archived-toggle")
    assert (results / "sweeps" / "old" / "labels.json").is_file() and console_errors(session) == []


def test_the_overlay_draws_two_sweeps_in_one_figure_and_filters_both(session, site):
    session.get(site + "/")
    for sweep in ("qk", "caps"):
        in_row(session, sweep, 'input[form="overlay"]').click()
    follow(session, session.find_element(By.CSS_SELECTOR, '#overlay button[type="submit"]'))
    assert urlsplit(session.current_url).path == "/overlay"
    assert parse_qs(urlsplit(session.current_url).query) == {"sweep": ["caps", "qk"]}  # in the index's order
    arms = ("qk/base", "qk/rmsnorm", "caps/base", "caps/softcap")
    means = {arm: [t for t in traces(session, "plot-lr", arm) if t["mode"] == "lines+markers"] for arm in arms}
    assert all(len(found) == 1 and [row[0] for row in found[0]["customdata"]] == [3, 3] for found in means.values())
    dashes = session.execute_script("""return document.getElementById("plot-lr").data.filter(function (t) {
        return t.mode === "lines+markers"; }).map(function (t) { return [t.meta, t.line.dash]; });""")
    assert {arm.split("/")[0]: dash for arm, dash in dashes} == {"caps": "solid", "qk": "dash"}
    curves = session.execute_script("return document.getElementById('plot-curves').data")
    assert {trace["meta"] for trace in curves} >= set(arms)

    for seed in ("1", "2"):  # one filter bar: a seed left out of every sweep's means
        session.find_element(By.CSS_SELECTOR, f'#seed-toggles input[data-seed="{seed}"]').click()
    for arm in arms:
        mean = [t for t in traces(session, "plot-lr", arm) if t["mode"] == "lines+markers"][0]
        assert [row[0] for row in mean["customdata"]] == [1, 1], arm
    session.find_element(By.CSS_SELECTOR, '#arm-toggles input[data-arm="caps/softcap"]').click()
    for plot in ("plot-lr", "plot-curves"):
        assert {t["visible"] for t in traces(session, plot, "caps/softcap")} == {"legendonly"}
        assert {t["visible"] for t in traces(session, plot, "qk/rmsnorm")} == {True}
    assert session.find_element(By.CSS_SELECTOR, ".crumbs a").get_attribute("href") == site + "/"
    assert console_errors(session) == []


def test_a_run_opens_on_its_page_from_a_figure_point_and_a_table_row(session, site):
    session.get(site + "/overlay?sweep=qk&sweep=caps")
    runs = [t for t in traces(session, "plot-lr", "caps/softcap") if t["mode"] == "markers" and t["customdata"]][0]
    at_first_lr = {run[0] for run in runs["customdata"] if run[0].startswith("caps-1-0.001-")}  # its seeds overlap
    x, y = point(session, "plot-lr", "caps/softcap", 0, mode="markers")
    move(session, x, y, click=True)  # the overlay has no run panel: the run's own page opens
    WebDriverWait(session, 120).until(lambda s: urlsplit(s.current_url).path.startswith("/run/"))
    WebDriverWait(session, 60).until(lambda s: s.find_elements(By.CSS_SELECTOR, ".run-panel"))
    run_id = urlsplit(session.current_url).path[len("/run/"):]
    assert len(at_first_lr) == 3 and run_id in at_first_lr
    assert parse_qs(urlsplit(session.current_url).query) == {"sweep": ["caps"]}
    assert session.find_element(By.CSS_SELECTOR, ".run-title").text.startswith(f"run {run_id}: softcap, LR 0.001, seed")
    panels = run_panels(session)
    assert list(panels) == list(RUN_PANELS)
    assert all(panel["traces"] and panel["points"] for panel in panels.values()), panels  # every panel has data
    assert "loss spikes" in panels["train_loss"]["names"]  # the planted spike, marked on the training loss
    assert panels["output_logit_max_abs"]["yaxis"] == "log" and panels["val_loss"]["yaxis"] == "linear"
    assert panels["attention"]["traces"] == 2  # a line per layer
    assert "spikes" in session.find_element(By.CSS_SELECTOR, ".run-facts").text

    session.find_element(By.CSS_SELECTOR, ".run-back").click()  # back to its sweep's live page
    WebDriverWait(session, 120).until(lambda s: urlsplit(s.current_url).path == "/sweep/caps")
    WebDriverWait(session, 60).until(lambda s: s.find_elements(By.CSS_SELECTOR, "#runs summary"))
    assert session.find_element(By.CSS_SELECTOR, ".crumbs a").get_attribute("href") == site + "/"
    session.find_element(By.CSS_SELECTOR, "#runs summary").click()
    link = session.find_element(By.CSS_SELECTOR, f'#runs a.run-link[data-run="{run_id}"]')
    session.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
    link.click()  # the sweep page's own panel, with a link to the run's page
    assert session.find_element(By.CSS_SELECTOR, "#run-detail .run-title").text.startswith(f"run {run_id}: softcap")
    own = session.find_element(By.ID, "run-page")
    assert own.is_displayed() and own.get_attribute("href") == f"{site}/run/{run_id}?sweep=caps"
    assert console_errors(session) == []
