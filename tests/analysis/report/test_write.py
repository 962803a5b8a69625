import re
import subprocess
import sys
from html import unescape

import pytest

import db
import synthetic
from analysis.errors import AnalysisError
from analysis.plots import FIGURES
from analysis.report import write_report
from analysis.report.page import REFRESH_SECONDS
from cli.main import main

REFRESH = f'data-reload="{REFRESH_SECONDS}"'
HOSTILE_ARM = '<img src=x onerror="alert(1)">'
HOSTILE_QUESTION = "Does <script>alert('q')</script> help?"


@pytest.fixture(scope="module")
def finished_page(planted_report):
    return planted_report, planted_report.read_text()


def test_report_is_self_contained_at_the_default_path(planted_store, finished_page):
    path, page = finished_page
    assert path == planted_store[0] / "sweeps" / "planted" / "report.html"
    # a ladder's figures are in its own section (test_ladder_section.py)
    shown = [name for name in FIGURES if name not in ("ladder", "decisions")]
    # every figure has data here (the run panel's are drawn when it opens)
    assert page.count('<div class="plot" id="plot-') == len(shown)
    assert page.count('<section id="run-detail" class="run" hidden>') == 1
    assert 'id="harness-data" type="application/json"' in page and "Plotly" in page  # plotly.js inlined
    # nothing to fetch: opens from disk, offline
    assert not re.search(r'<(script|img|link|iframe)[^>]* (src|href)=', page)


def test_finished_sweep_does_not_reload(finished_page):
    _, page = finished_page
    assert REFRESH not in page and "http-equiv" not in page
    assert "cells: finished." in page


def test_the_page_leads_with_the_answer_then_the_compact_table(finished_page):
    _, page = finished_page
    answer = page[page.index('<section class="answer"'):page.index("<h2>By arm and LR</h2>")]
    assert page.index('<section class="answer"') < page.index("<h2>By arm and LR</h2>") < page.index("<h2>Figures</h2>")
    assert "<b>better</b> wins: -0.1" in answer
    for arm, verdict in [("better", "better"), ("worse", "worse"), ("null", "within noise"), ("tiny", "negligible"),
                         ("single", "no CI")]:
        assert re.search(rf'<li data-arm="{arm}" data-verdict="{verdict}">', answer)
        assert re.search(rf'<tr><td data-sort="{arm}">{arm}</td><td data-sort="{verdict}" data-verdict', answer)
    assert re.search(r'data-arm="null"[^<]*<b>null</b>.*?<b>not resolved</b>.*?\d+ more seeds would resolve the '
                     r'observed difference', answer)
    assert "to resolve the observed difference" in answer and "to resolve ±0.01 nats" in answer
    for column in ("best_lr", "lr_sensitivity", "diverged runs", "peak_attn_logit"):
        assert f">{column}</th>" in answer


def test_the_table_by_arm_and_lr_labels_both_seed_plans_and_keeps_the_arm_in_view(finished_page):
    _, page = finished_page
    details = page[page.index("<h2>By arm and LR</h2>"):page.index("<h2>Figures</h2>")]
    assert 'class="scroll sticky-first" id="details"' in details
    assert "<th>seeds_needed (±0.01)</th>" in details and "<th>seeds_needed (observed Δ)</th>" in details


@pytest.mark.slow
def test_every_sql_fold_is_one_statement_that_runs_in_harness_db_query(planted_store, finished_page, capsys):
    _, page = finished_page
    folds = [unescape(q) for q in re.findall(r'<details '
                                             r'class="sql"><summary>SQL[^<]*</summary><pre>(.*?)</pre></details>', page,
                                             re.S)]
    assert len(folds) >= len(FIGURES) - 1 + 4  # every figure but the ladder's
    for sql in folds:
        assert sql.count(";") == 0 and sql.lstrip().upper().startswith("WITH SWEEP_RUNS AS (")
        assert main(["db", "query", sql, "--results", str(planted_store[0]), "--format", "csv"]) == 0, sql
        assert len(capsys.readouterr().out.splitlines()) >= 2  # a header and some rows
    pasted = subprocess.run([sys.executable, "-m", "cli.main", "db", "query", folds[0], "--results",
                             str(planted_store[0])],
                            capture_output=True, text=True, timeout=120)  # and one through the command line itself
    assert pasted.returncode == 0 and pasted.stderr == "" and "final_val_loss" in pasted.stdout


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
                synthetic.write_run(tmp_path, f"{qk_norm}-{width}-{seed}", sweep="wide", arm=f"{qk_norm}-{width}",
                                    seed=seed, lr=1e-3,
                                    final=3.0 + 0.01 * seed + 0.001 * (qk_norm == "none") * (-1) ** seed, steps=12,
                                    config={"d_model": width, "qk_norm": qk_norm})
    page = write_report(tmp_path, "wide").read_text()
    scale = page[page.index("<h2>Across scales</h2>"):page.index("<h2>Figures</h2>")]
    assert "No resolved reversal across d_model." in scale and "Ranking reverses" not in scale
    assert scale.count('<td data-sort="qk_norm=rmsnorm">') == 2 and "no resolved reversal" in scale
    assert '<details class="sql"><summary>SQL' in scale


@pytest.mark.slow
def test_the_page_names_the_code_that_made_its_finished_runs(tmp_path):
    code = {"harness_version": "0.1.0", "git_commit": "6eaecc0bad5c62b25689559f679d6e51b74d8242", "git_dirty": False,
            "torch_version": "2.13.0", "device_name": "cpu"}
    for arm in ("base", "x"):
        for seed in range(2):
            synthetic.write_run(tmp_path, f"{arm}-{seed}", sweep="made", arm=arm, seed=seed, lr=1e-3,
                                final=3.0 + seed / 10, steps=12, provenance=code)
    page = write_report(tmp_path, "made").read_text()
    assert '<p class="code">Code: harness 0.1.0 @ 6eaecc0 (clean), torch 2.13.0, cpu.</p>' in page
    assert page.index('<p class="code">') < page.index('<section class="answer"')
    synthetic.write_run(tmp_path, "x-2", sweep="made", arm="x", seed=2, lr=1e-3, final=3.0, steps=12,
                        provenance={**code, "git_commit": "1a2b3c4" + "0" * 33, "git_dirty": True})
    page = write_report(tmp_path, "made").read_text()
    assert ('<p class="code">Code: the 5 runs mix code versions: 4 by harness 0.1.0 @ 6eaecc0 (clean), 1 by harness '
            "0.1.0 @ 1a2b3c4 (dirty); torch 2.13.0, cpu.</p>") in page


def _interrupted_store(results):
    synthetic.write_run(results, "i0", sweep="cut", arm="base", seed=0, lr=1e-3, final=3.0, steps=12)
    synthetic.write_run(results, "i1", sweep="cut", arm="base", seed=1, lr=1e-3, final=3.0, steps=12,
                        status="interrupted")
    cells = [{"arm": "base", "lr": 1e-3, "seed": s, "run_id": f"i{s}"} for s in range(3)]  # i2: never started
    db.write_sweep(results, "cut", {"question": "stopped?", "baseline": "base"}, cells)


def test_an_interrupted_sweep_says_so_and_does_not_reload(tmp_path):
    _interrupted_store(tmp_path)
    page = write_report(tmp_path, "cut").read_text()
    assert REFRESH not in page and 'class="status interrupted"' in page
    assert ("Interrupted: 1 of 3 cells; partial (1 interrupted or crashed, 2 waiting in all); no worker is running it."
            in page)


def test_a_sweep_with_only_pending_cells_and_nothing_training_still_reloads(tmp_path):
    synthetic.write_run(tmp_path, "p0", sweep="wait", arm="base", seed=0, lr=1e-3, final=3.0, steps=12)
    db.write_sweep(tmp_path, "wait", {}, [{"arm": "base", "lr": 1e-3, "seed": s, "run_id": f"p{s}"} for s in range(2)])
    page = write_report(tmp_path, "wait").read_text()  # a worker may be between cells: no sign of a stop
    assert REFRESH in page and 'class="status running"' in page and "pause reloading" in page
