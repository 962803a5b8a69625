"""The dashboard index's headline verdict per sweep, on planted sweeps (the planted effect is the oracle), and its
cache: kept while the sweep's cell counts stay, computed again when a cell finishes."""

import re

import pytest

import db
import synthetic
from analysis.report.dashboard import Pages
from analysis.report.index import View
from analysis.report.index_verdict import NONE, UNKNOWN, WAITING, WINNER, sweep_verdict

SEEDS = 3


def test_the_arm_resolved_better_by_the_most_wins_with_its_planted_effect(tmp_path):
    arms = {"base": (0.0, 0.003, SEEDS), "better": (-0.1, 0.003, SEEDS), "slightly": (-0.04, 0.003, SEEDS),
            "worse": (0.08, 0.003, SEEDS)}
    synthetic.write_planted(tmp_path, "s", arms, steps=12)
    verdict = sweep_verdict(tmp_path, "s")
    found = re.fullmatch(r"better wins: (-?[0-9.]+) nats", verdict.text)
    assert verdict.kind == WINNER and verdict.arm == "better" and found, verdict
    assert float(found.group(1)) == pytest.approx(-0.1, abs=0.01)
    low, high = map(float, re.match(r"95% CI \[(\S+), (\S+)\]; ", verdict.detail).groups())
    assert low < -0.1 < high < 0 and "paired t-test" in verdict.detail


def test_no_winner_tallies_the_verdicts_and_a_sweep_with_nothing_to_compare_says_so(tmp_path):
    synthetic.write_planted(tmp_path, "s", {"base": (0.0, 0.003, SEEDS), "worse": (0.08, 0.003, SEEDS)}, steps=12)
    verdict = sweep_verdict(tmp_path, "s")
    assert (verdict.kind, verdict.text, verdict.arm) == (NONE, "no arm resolved better (1 worse)", None)
    synthetic.write_planted(tmp_path, "alone", {"base": (0.0, 0.003, SEEDS)}, steps=12)
    assert sweep_verdict(tmp_path, "alone").text == "only the baseline has finished runs"
    db.write_sweep(tmp_path, "fresh", {}, [{"arm": "base", "seed": 0, "run_id": "never-started"}])
    fresh = sweep_verdict(tmp_path, "fresh")
    assert (fresh.kind, fresh.text) == (WAITING, "no finished run yet")
    unknown = sweep_verdict(tmp_path, "s", metric="no_such_metric")
    assert unknown.kind == UNKNOWN and unknown.text == "cannot judge" and "no_such_metric" in unknown.detail


def test_the_index_computes_a_verdict_again_only_when_a_cell_finishes(tmp_path):
    cells = [{"arm": arm, "seed": seed, "run_id": f"{arm}-{seed}"}
             for arm in ("base", "better") for seed in range(SEEDS)]
    db.write_sweep(tmp_path, "s", {"baseline": "base"}, cells)
    for seed in range(SEEDS):
        synthetic.write_run(tmp_path, f"base-{seed}", sweep="s", arm="base", seed=seed, lr=None,
                            final=3.0 + seed / 100, steps=12)
    pages = Pages(tmp_path)
    assert "only the baseline has finished runs" in pages.index(View())
    kept = pages._kept[("verdict", "s")][1]
    pages.index(View())
    assert pages._kept[("verdict", "s")][1] is kept  # the same cell counts: not computed again
    for seed in range(SEEDS):
        synthetic.write_run(tmp_path, f"better-{seed}", sweep="s", arm="better", seed=seed, lr=None,
                            final=2.9 + seed / 100 + 0.001 * (-1) ** seed, steps=12)
    page = pages.index(View())
    found = re.search(r'class="verdict winner"[^>]*>better wins: (-?[0-9.]+) nats<', page)
    assert "only the baseline" not in page and found and float(found.group(1)) == pytest.approx(-0.1, abs=0.01)
