"""The report's headline: each arm at its own best LR against the baseline at its own best LR, judged by the
comparison's rules. Expected values come from scipy on the planted finals (written through db.RunWriter):
the best LR as the argmin of the planted means, `scipy.stats.ttest_rel` on the matched seeds there, Holm by
its definition, and the seeds for the observed difference by a power search over `scipy.stats.nct`."""

import math

import numpy as np
import pytest
from scipy import stats

import synthetic
from analysis.reading.frames import load_sweep
from analysis.summary import analyse
from oracles import holm_by_definition

LRS = (1e-3, 3e-3, 1e-2)
# arm: (effect, noise, seeds); the LR penalty is 0.05 per decade from each arm's own optimum (OPTIMUM)
ARMS = {"baseline": (0.0, 0.004, 5), "faster": (-0.06, 0.004, 5), "same": (0.0, 0.02, 5), "slower": (0.04, 0.004, 5)}
OPTIMUM = {"baseline": 3e-3, "faster": 1e-2, "same": 3e-3, "slower": 1e-3}
MIN_EFFECT = 0.01


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Runs of sweep 'h': final = 3 + effect + 0.05 per decade from the arm's optimum + a per-seed offset shared by
    the arms (what pairing removes) + run noise; returns the results dir and the planted finals by (arm, lr, seed)."""
    results = tmp_path_factory.mktemp("headline") / "results"
    rng = np.random.default_rng(7)
    offsets, finals = rng.normal(0, 0.05, 5), {}
    for index, (arm, (effect, noise, seeds)) in enumerate(ARMS.items()):
        for lr in LRS:
            for seed in range(seeds):
                final = 3.0 + effect + 0.05 * abs(math.log10(lr / OPTIMUM[arm])) + offsets[seed] + rng.normal(0, noise)
                synthetic.write_run(results, f"h-{index}-{lr}-{seed}", sweep="h", arm=arm, seed=seed, lr=lr,
                                    final=final, steps=20)
                finals[(arm, lr, seed)] = final
    return results, finals


def oracle_needed(diffs: np.ndarray, effect: float) -> int:
    """Fewest pairs with 80% power (two-sided paired t-test, α 0.05) for `effect`, the spread at its 90% upper bound."""
    n = len(diffs)
    sd = np.std(diffs, ddof=1) * math.sqrt((n - 1) / stats.chi2.ppf(0.10, n - 1))
    for m in range(2, 10_001):
        critical = stats.t.ppf(0.975, m - 1)
        shift = effect / sd * math.sqrt(m)
        far = stats.nct.cdf(-critical, m - 1, shift)  # < 1e-16 where scipy returns NaN (shifts ≥ 8)
        if stats.nct.sf(critical, m - 1, shift) + (0.0 if math.isnan(far) else far) >= 0.8:
            return m
    return 10_000


@pytest.mark.slow
def test_each_arm_is_judged_at_its_best_lr_against_the_baseline_at_its_best_lr(planted):
    results, finals = planted
    analysis = analyse(load_sweep(results, "h"), min_effect=MIN_EFFECT)
    best = {arm: min(LRS, key=lambda lr: np.mean([v for (a, at, _), v in finals.items() if a == arm and at == lr]))
            for arm in ARMS}
    assert {line.arm: line.lr for line in analysis.headlines} == {arm: best[arm] for arm in ARMS if arm != "baseline"}
    assert best["faster"] == 1e-2 and best["slower"] == 1e-3  # the planted optima differ from the baseline's
    arms = [arm for arm in ARMS if arm != "baseline"]
    diffs = {arm: np.array([finals[(arm, best[arm], s)] - finals[("baseline", best["baseline"], s)] for s in range(5)])
             for arm in arms}
    p = [stats.ttest_rel([finals[(arm, best[arm], s)] for s in range(5)],
                         [finals[("baseline", best["baseline"], s)] for s in range(5)]).pvalue
         for arm in arms]
    p_holm = dict(zip(arms, holm_by_definition(p)))
    for line in analysis.headlines:
        d = diffs[line.arm]
        low, high = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
        assert line.row["delta"] == pytest.approx(d.mean(), abs=1e-9)
        assert (line.row["delta_ci_low"], line.row["delta_ci_high"]) == pytest.approx((low, high), abs=1e-9)
        assert line.row["p_holm"] == pytest.approx(p_holm[line.arm], rel=1e-6)
        expected = ("negligible" if -MIN_EFFECT < low and high < MIN_EFFECT else
                    ("better" if d.mean() < 0 else "worse") if p_holm[line.arm] < 0.05 else "within noise")
        assert line.row["verdict"] == expected, line.arm
        assert line.seeds_for_observed == oracle_needed(d, abs(d.mean()))
        assert line.row["seeds_needed"] == oracle_needed(d, MIN_EFFECT)
    verdicts = {line.arm: line.row["verdict"] for line in analysis.headlines}
    assert verdicts["faster"] == "better" and verdicts["slower"] == "worse"


def test_the_compact_table_leads_with_the_baseline_and_has_each_arms_answer(planted):
    analysis = analyse(load_sweep(planted[0], "h"), min_effect=MIN_EFFECT)
    compact = analysis.compact()
    assert list(compact["arm"]) == ["baseline", "faster", "same", "slower"]
    assert list(compact["verdict"])[0] == "baseline" and list(compact["best_lr"]) == [3e-3, 1e-2, 3e-3, 1e-3]
    by_arm = {line.arm: line.row for line in analysis.headlines}
    assert compact.set_index("arm").loc["faster", "delta"] == by_arm["faster"]["delta"]


def test_an_unresolved_arm_says_how_many_more_seeds_the_observed_difference_needs(planted):
    analysis = analyse(load_sweep(planted[0], "h"), min_effect=MIN_EFFECT)
    same = [line for line in analysis.headlines if line.arm == "same"][0]  # planted equal, with 5× the run noise
    assert same.row["verdict"] == "within noise" and not same.resolved
    assert same.more_seeds == same.seeds_for_observed - 5 and same.more_seeds > 0


def test_after_adaptive_seeding_the_headline_quotes_only_the_anytime_valid_test(tmp_path):
    """A sweep whose seeds --until-decided added (sweep.json's `seeding`): the fixed-n test resolves `worse` (scipy
    says so), the anytime-valid one has not decided (its oracle's e-value is under the threshold), and the answer
    says `undecided` with the confidence sequence, never the fixed-n p."""
    import db
    from analysis.report.answer import answer
    from sequential_oracle import oracle_decision

    diffs = [0.03, 0.012, 0.025, 0.015, 0.02, 0.018]
    offsets = np.random.default_rng(3).normal(0, 0.05, len(diffs))
    cells = []
    for seed, (offset, diff) in enumerate(zip(offsets, diffs)):
        for arm, final in (("base", 3.0 + offset), ("slower", 3.0 + offset + diff)):
            run_id = f"a-{arm}-{seed}"
            synthetic.write_run(tmp_path, run_id, sweep="a", arm=arm, seed=seed, lr=1e-3, final=final, steps=20)
            cells.append({"arm": arm, "lr": 1e-3, "seed": seed, "run_id": run_id})
    seeding = {"rule": "until-decided", "rounds": [{"round": 2, "seeds": 6, "max_seeds": 20, "seed_batch": 2}]}
    db.write_sweep(tmp_path, "a", {"question": "q?", "baseline": "base", "seeding": seeding}, cells)
    assert stats.ttest_1samp(diffs, 0).pvalue < 0.05  # the fixed-n test alone would say `worse`
    assert oracle_decision(diffs, MIN_EFFECT) == ("undecided", None)
    analysis = analyse(load_sweep(tmp_path, "a"), min_effect=MIN_EFFECT)
    (line,) = analysis.headlines
    assert line.anytime and line.row["verdict"] == "undecided"
    fixed = analysis.comparison.set_index("arm").loc["slower"]
    assert fixed["verdict"] == "worse" and fixed["seq_verdict"] == "undecided"  # the table shows both, labelled
    html = answer(analysis)
    assert f"{fixed['p_holm']:.2g}" not in html and "Holm p" not in html
    assert "<b>undecided</b>" in html and "95% confidence sequence" in html and "seeds were added adaptively" in html
