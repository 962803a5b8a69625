"""The verdict rule table (analysis/comparison/rules.py): each rule fires on its own evidence and in its order, every
rule is reached by `harness compare` on a planted store (the truth planted, the expected verdict read off the
rule by hand), a loss claim is barred by the favoured side's own divergence, and the docs, the CLI and the page
render the same table."""

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

import synthetic
from analysis.comparison.rules import RULES, Evidence, Verdict, decide, rules_markdown, rules_text
from analysis.report.page import rules_html
from cli.main import main

DOCS = Path(__file__).parents[3] / "docs" / "analysis.md"


def evidence(**given):
    values = dict(stability_resolved=False, loss_resolved=False, no_ci=False, inside_margin=False, direction=0,
                  arm_only=0, baseline_only=0) | given
    return Evidence(**{name: np.array([value]) for name, value in values.items()})


@pytest.mark.parametrize("given, path, expected", [
    (dict(stability_resolved=True, arm_only=3, loss_resolved=True, direction=-1), "fixed", "less stable"),
    (dict(stability_resolved=True, baseline_only=3, loss_resolved=True, direction=1), "fixed", "more stable"),
    (dict(no_ci=True, inside_margin=True), "fixed", "no CI"),
    (dict(inside_margin=True, loss_resolved=True, direction=-1), "fixed", "negligible"),
    (dict(inside_margin=True, arm_only=1, baseline_only=1), "fixed", "within noise"),  # sides diverged differently
    (dict(loss_resolved=True, direction=-1), "fixed", "better"),
    (dict(loss_resolved=True, direction=-1, baseline_only=2), "fixed", "better"),  # the other side's: left out
    (dict(loss_resolved=True, direction=-1, arm_only=1), "fixed", "within noise"),  # its own: barred
    (dict(loss_resolved=True, direction=1), "sequential", "worse"),
    (dict(loss_resolved=True, direction=1, baseline_only=1), "sequential", "undecided"),
    (dict(), "sequential", "undecided"),
])
def test_the_first_rule_that_holds_decides(given, path, expected):
    assert decide(evidence(**given), path)[0] == expected


# arm: (planted effect, run noise, seeds); divergences planted by (arm, lr, seed) → step
ARMS = {"base": (0.0, 0.002, 8), "better": (-0.05, 0.002, 8), "worse": (0.05, 0.002, 8), "same": (0.0, 0.03, 8),
        "tiny": (0.0005, 0.0005, 8), "single": (-0.05, 0.002, 1), "unstable": (-0.05, 0.002, 8),
        "barred": (-0.05, 0.002, 8), "fixes": (0.0, 0.002, 8)}
DIVERGED = {**{("unstable", None, s): 5 for s in range(6)}, ("barred", None, 3): 5}
EXPECTED = {"better": "better", "worse": "worse", "same": "within noise", "tiny": "negligible", "single": "no CI",
            "unstable": "less stable", "barred": "within noise"}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    path = tmp_path_factory.mktemp("rules") / "results"
    synthetic.write_planted(path, "rules", ARMS, steps=12, diverged=DIVERGED)
    return path


def compare_rows(results, *extra) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["compare", "rules", "--results", str(results), "--baseline", "base", "--format", "json",
                     *extra]) == 0
    return {row["arm"]: row for row in json.loads(out.getvalue())}


def test_compare_reaches_every_rule_on_a_planted_store(planted):
    rows = compare_rows(planted)
    assert {arm: rows[arm]["verdict"] for arm in EXPECTED} == EXPECTED
    # "barred" is "better" with one divergence where the baseline completed: its survivors resolve it, and the
    # outcome model does not let them speak for it
    assert rows["barred"]["p_holm"] < 0.05 and rows["barred"]["delta_ci_high"] < 0 and rows["barred"]["arm_only"] == 1
    assert rows["better"]["decided_by"].startswith("paired t-test, Holm across")
    assert rows["unstable"]["decided_by"].startswith("Fisher's exact test") and rows["same"]["decided_by"] is None


def test_a_stable_arm_against_a_baseline_that_diverges_is_more_stable(tmp_path):
    arms = {"base": (0.0, 0.002, 8), "fixes": (0.0, 0.002, 8)}
    synthetic.write_planted(tmp_path, "rules", arms, steps=12, diverged={("base", None, s): 5 for s in range(6)})
    rows = compare_rows(tmp_path, "--sequential")
    assert rows["fixes"]["verdict"] == "more stable" and rows["fixes"]["baseline_only"] == 6


def test_a_retried_seed_with_a_divergence_is_a_diverged_seed(tmp_path):
    # seed 0 of the arm ran twice: one run diverged, its retry completed; the worst case counts
    arms = {"base": (0.0, 0.002, 3), "retried": (0.0, 0.002, 3)}
    synthetic.write_planted(tmp_path, "rules", arms, steps=12)
    synthetic.write_run(tmp_path, "retry-0", sweep="rules", arm="retried", seed=0, lr=None, final=3.0, steps=12,
                        diverge_at=5)
    rows = compare_rows(tmp_path)
    assert (rows["retried"]["arm_diverged"], rows["retried"]["arm_only"], rows["retried"]["n"]) == (1, 1, 2)


def test_the_docs_the_cli_and_the_page_render_the_same_table(capsys):
    assert rules_markdown() in DOCS.read_text()
    assert main(["compare", "--rules", "unused"]) == 0
    assert capsys.readouterr().out.strip() == rules_text()
    page = rules_html()
    assert all(rule.condition.replace("'", "&#x27;") in page for rule in RULES)
    assert ([line.split(". ", 1)[1].split(":")[0] for line in rules_text().splitlines()[:-1]]
            == [str(r.verdict) for r in RULES])
    assert set(Verdict) >= {rule.verdict for rule in RULES}
