"""A ladder sweep's report answers "Will it hold at scale?": a sentence per arm (its extrapolated gap and where its
curve crosses the baseline's), the interactive figure, the fits against compute and parameters, decision
consistency, and SQL folds that run in `harness db query`; a sweep that is no ladder has no such section."""

import json
import re
from html import unescape

import pytest

from analysis.report import write_report
from cli.main import main

pytestmark = pytest.mark.slow  # waits on processes or builds a shared store first


@pytest.fixture(scope="module")
def ladder_page(ladder_store, tmp_path_factory):
    return write_report(ladder_store[0], "lad", tmp_path_factory.mktemp("page") / "report.html").read_text()


def _section(page: str) -> str:
    return page[page.index('<h2 id="ladder">Will it hold at scale?</h2>'):page.index("<h2>Figures</h2>")]


def test_the_section_says_per_arm_what_the_fits_predict(ladder_page):
    section = _section(ladder_page)
    sentence = re.search(r"<li><b>steeper</b> at 3\.07e\+16 FLOPs \(the default: 100× the largest rung\): (.*?)</li>",
                         section).group(1)
    assert re.match(r"predicted -?[\d.]+ nats .*\(95% \[-?[\d.]+, -?[\d.]+\]\); their fitted curves (cross at|do not "
                    r"cross)", sentence)
    for heading in ("Fits against training compute, extrapolated to 3.07e+16 FLOPs",
                    "Fits against parameters, extrapolated to", "Decision consistency"):
        assert f"<h3>{heading}" in section
    for column in ("E 95%", "alpha 95%", "A 95%", "predicted 95%", "gap 95%", "crossover 95%", "resolved_opposite"):
        assert f"<th>{column}</th>" in section
    assert '<div class="plot" id="plot-ladder"></div>' in section


def test_the_page_carries_the_figure_and_every_fold_runs_in_db_query(ladder_store, ladder_page, capsys):
    data = json.loads(unescape(re.search(r'<script id="harness-data" type="application/json">(.*?)</script>',
                                         ladder_page, re.S).group(1)))
    assert {trace["legendgroup"] for trace in data["fixed"]["ladder"]["data"]} == {"base", "steeper"}
    folds = [unescape(q) for q in re.findall(r'<details '
                                             r'class="sql"><summary>SQL[^<]*</summary><pre>(.*?)</pre></details>',
                                             _section(ladder_page), re.S)]
    assert len(folds) == 3
    for sql in folds:
        assert main(["db", "query", sql, "--results", str(ladder_store[0]), "--format", "csv"]) == 0, sql
        assert len(capsys.readouterr().out.splitlines()) >= 2


def test_a_sweep_that_is_no_ladder_has_no_such_section(planted_report):
    assert "Will it hold at scale?" not in planted_report.read_text()
