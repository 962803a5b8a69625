import re

import pytest

import db
import synthetic
from analysis.errors import AnalysisError
from analysis.plots import FIGURES
from analysis.report import write_report
from analysis.report.page import REFRESH_SECONDS

REFRESH = f'<meta http-equiv="refresh" content="{REFRESH_SECONDS}">'
HOSTILE_ARM = '<img src=x onerror="alert(1)">'
HOSTILE_QUESTION = "Does <script>alert('q')</script> help?"


@pytest.fixture(scope="module")
def finished_page(planted_report):
    return planted_report, planted_report.read_text()


def test_report_is_self_contained_at_the_default_path(planted_store, finished_page):
    path, page = finished_page
    assert path == planted_store[0] / "sweeps" / "planted" / "report.html"
    assert page.count('src="data:image/png;base64,') == len(FIGURES)
    assert not re.search(r'(src|href)="(?!data:)', page)  # nothing to fetch: opens from disk, offline
    assert "<link" not in page and "http://" not in page and "https://" not in page


def test_finished_sweep_does_not_reload(finished_page):
    _, page = finished_page
    assert REFRESH not in page and "http-equiv" not in page
    assert "cells: finished." in page


def test_summary_lists_every_arm_with_verdicts_and_sql(finished_page):
    _, page = finished_page
    summary = page[page.index("<h2>Summary</h2>"):page.index("<h2>Figures</h2>")]
    for arm, verdict in [("better", "better"), ("worse", "worse"), ("null", "within noise"), ("tiny", "negligible"), ("single", "no CI")]:
        assert re.search(rf'<tr><td data-sort="{arm}">{arm}</td>(?:(?!</tr>).)*<td data-sort="{verdict}" data-verdict', summary)
    assert "lr_sensitivity" in summary and "spike_score" in summary and "divergence_rate" in summary
    assert page.count("<summary>SQL</summary>") == len(FIGURES) + 1


def _running_store(results, question=HOSTILE_QUESTION):
    synthetic.write_run(results, "c0", sweep="live", arm=HOSTILE_ARM, seed=0, lr=1e-3, final=3.0, steps=12)
    synthetic.write_run(results, "c1", sweep="live", arm="base", seed=0, lr=1e-3, final=3.1, steps=12)
    cells = [{"arm": HOSTILE_ARM, "lr": 1e-3, "seed": s, "run_id": f"c{2 * s}"} for s in range(2)]
    cells += [{"arm": "base", "lr": 1e-3, "seed": s, "run_id": f"c{2 * s + 1}"} for s in range(2)]
    db.write_sweep(results, "live", {"question": question, "baseline": "base"}, cells)


def test_running_sweep_reloads_and_says_partial_with_user_strings_escaped(tmp_path):
    _running_store(tmp_path)
    page = write_report(tmp_path, "live").read_text()
    assert REFRESH in page and "2 of 4 cells; partial" in page
    assert HOSTILE_ARM not in page and "<script>alert" not in page
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
    assert "Does &lt;script&gt;alert(&#x27;q&#x27;)&lt;/script&gt; help?" in page


def test_running_sweep_with_nothing_finished_gets_a_waiting_page(tmp_path):
    synthetic.write_run(tmp_path, "r", sweep="new", arm="a", seed=0, lr=1e-3, final=3.0, steps=5, status=None)
    page = write_report(tmp_path, "new").read_text()
    assert REFRESH in page and "0 of 1 cells; partial" in page and "No cell has finished yet" in page


def test_stopped_sweep_with_nothing_finished_is_refused(tmp_path):
    synthetic.write_run(tmp_path, "r", sweep="broken", arm="a", seed=0, lr=1e-3, final=3.0, steps=5, status="failed")
    with pytest.raises(AnalysisError, match="sweep 'broken' has no finished runs yet"):
        write_report(tmp_path, "broken")


def test_rewrite_replaces_the_file_atomically(tmp_path):
    synthetic.write_run(tmp_path, "r", sweep="live", arm="a", seed=0, lr=1e-3, final=3.0, steps=5, status=None)
    cells = [{"arm": "a", "lr": 1e-3, "seed": 0, "run_id": "r"}]
    db.write_sweep(tmp_path, "live", {"question": "first"}, cells)
    out = tmp_path / "page" / "report.html"
    write_report(tmp_path, "live", out)
    with out.open() as reader_of_the_old_page:  # a reader mid-way keeps the whole old page
        db.write_sweep(tmp_path, "live", {"question": "second"}, cells)
        write_report(tmp_path, "live", out)
        assert "first" in reader_of_the_old_page.read()
    assert "second" in out.read_text()
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]  # no temp file left behind


def test_a_sweep_at_two_widths_gets_its_comparison_across_them(tmp_path):
    # identical variants (each seed's runs equal up to 0.001 noise): ranks at each width, and no resolved reversal
    for qk_norm in ("none", "rmsnorm"):
        for width in (64, 128):
            for seed in range(3):
                synthetic.write_run(tmp_path, f"{qk_norm}-{width}-{seed}", sweep="wide", arm=f"{qk_norm}-{width}", seed=seed,
                                    lr=1e-3, final=3.0 + 0.01 * seed + 0.001 * (qk_norm == "none") * (-1) ** seed, steps=12,
                                    config={"d_model": width, "qk_norm": qk_norm})
    page = write_report(tmp_path, "wide").read_text()
    scale = page[page.index("<h2>Across scales</h2>"):page.index("<h2>Figures</h2>")]
    assert "No resolved reversal across d_model." in scale and "Ranking reverses" not in scale
    assert scale.count('<td data-sort="qk_norm=rmsnorm">') == 2 and "no resolved reversal" in scale
    assert "<summary>SQL</summary>" in scale
