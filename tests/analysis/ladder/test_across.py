import numpy as np
import pytest
from scipy import stats as scipy_stats

import synthetic
from analysis.errors import AnalysisError
from analysis.ladder.across import NO_REVERSAL, check_across, compare_across
from analysis.reading.frames import load_sweep

NOISE = 0.003


def _write(results, sweep, finals, seeds=4, lrs=(1e-3,), diverged=()):
    """finals: (qk_norm, d_model) → planted final loss; per-run noise NOISE; `diverged`: (qk_norm, d_model, lr,
    seed)."""
    rng = np.random.default_rng(1)
    for (qk_norm, width), final in finals.items():
        for lr in lrs:
            for seed in range(seeds):
                gone = (qk_norm, width, lr, seed) in diverged
                synthetic.write_run(results, f"{sweep}-{qk_norm}-{width}-{lr}-{seed}", sweep=sweep,
                                    arm=f"{qk_norm}-{width}", seed=seed, lr=lr, final=final + rng.normal(0, NOISE),
                                    steps=12, diverge_at=5 if gone else None,
                                    config={"d_model": width, "qk_norm": qk_norm, "d_ff": 3 * width})


def test_a_resolved_reversal_is_flagged_on_both_rows(tmp_path):
    _write(tmp_path, "grow", {("none", 128): 3.0, ("rmsnorm", 128): 2.9, ("none", 256): 2.6, ("rmsnorm", 256): 2.7})
    scale = compare_across(load_sweep(tmp_path, "grow"), "final_val_loss")
    table = scale.table
    # d_ff follows d_model
    assert scale.axis == "d_model" and set(table["variant"]) == {"qk_norm=none", "qk_norm=rmsnorm"}
    assert (table[table["d_model"] == 128].set_index("variant")["rank"].to_dict()
            == {"qk_norm=rmsnorm": 1, "qk_norm=none": 2})
    assert len(scale.reversals) == 1
    assert scale.reversals[0].startswith("qk_norm=rmsnorm beats qk_norm=none at d_model=128 but loses to it at "
                                         "d_model=256 (Holm")
    assert table["reversal"].str.contains("here, (?:beats|loses to) it at d_model=").all()


def test_the_reversal_p_is_the_larger_of_the_two_paired_tests(tmp_path):
    _write(tmp_path, "grow", {("none", 128): 3.0, ("rmsnorm", 128): 2.99, ("none", 256): 2.6, ("rmsnorm", 256): 2.61})
    sweep = load_sweep(tmp_path, "grow")
    scale = compare_across(sweep, "final_val_loss")
    runs = sweep.runs.set_index(["qk_norm", "d_model", "seed"]).sort_index()["final_val_loss"]
    p = [scipy_stats.ttest_rel(runs.loc[("rmsnorm", w)], runs.loc[("none", w)]).pvalue for w in (128, 256)]
    assert max(p) < 0.05  # resolved at both widths, in opposite directions; one candidate, so Holm leaves it as it is
    assert scale.reversals == [f"qk_norm=rmsnorm beats qk_norm=none at d_model=128 but loses to it at d_model=256 "
                               f"(Holm-adjusted p {max(p):.2g})"]
    rows = scale.table.set_index(["d_model", "variant"])["reversal"]
    assert rows[(256, "qk_norm=none")] == ("beats qk_norm=rmsnorm here, loses to it at d_model=128 (Holm-adjusted p "
                                           f"{max(p):.2g})")


def test_an_order_that_holds_has_no_flag(tmp_path):
    _write(tmp_path, "hold", {("none", 128): 3.0, ("rmsnorm", 128): 2.9, ("none", 256): 2.8, ("rmsnorm", 256): 2.7})
    scale = compare_across(load_sweep(tmp_path, "hold"), "final_val_loss")
    assert scale.reversals == [] and (scale.table["reversal"] == NO_REVERSAL).all()


def test_two_seeds_with_equal_differences_resolve_nothing(tmp_path):
    # the old rule flagged this: a sign change of the means, from two seeds whose differences are exactly equal
    for (qk_norm, width), final in {("none", 128): 3.0, ("rmsnorm", 128): 2.9, ("none", 256): 2.6,
                                    ("rmsnorm", 256): 2.7}.items():
        for seed in range(2):
            synthetic.write_run(tmp_path, f"{qk_norm}-{width}-{seed}", sweep="two", arm=f"{qk_norm}-{width}", seed=seed,
                                lr=1e-3, final=final + 0.01 * seed, steps=12,
                                config={"d_model": width, "qk_norm": qk_norm})
    assert compare_across(load_sweep(tmp_path, "two"), "final_val_loss").reversals == []


def test_a_lucky_survivor_does_not_make_an_lr_best(tmp_path):
    # at 1e-2 two of three seeds diverge; the survivor's loss is the lowest of all, but ℓ(η) counts the others as ℓ₀
    finals = {("none", 128): 3.0, ("rmsnorm", 128): 3.0, ("none", 256): 3.0, ("rmsnorm", 256): 3.0}
    gone = {("none", 128, 1e-2, 0), ("none", 128, 1e-2, 1)}
    _write(tmp_path, "lucky", finals, seeds=3, lrs=(1e-3, 1e-2), diverged=gone)
    table = compare_across(load_sweep(tmp_path, "lucky"), "final_val_loss").table.set_index(["d_model", "variant"])
    assert table.at[(128, "qk_norm=none"), "best_lr"] == 1e-3 and table.at[(128, "qk_norm=none"), "diverged"] == 0


def test_across_names_the_closest_field_and_refuses_one_value(tmp_path):
    _write(tmp_path, "grow", {("none", 128): 3.0, ("rmsnorm", 128): 2.9}, seeds=2)
    sweep = load_sweep(tmp_path, "grow")
    with pytest.raises(AnalysisError,
                       match=r"--across 'd_modl' is not a config field of sweep 'grow''s runs; "
                       r"did you mean 'd_model'\?"):
        check_across(sweep, "d_modl")
    with pytest.raises(AnalysisError,
                       match=r"--across 'd_model' takes one value \(128\) among sweep 'grow''s finished runs"):
        check_across(sweep, "d_model")
    check_across(sweep, "qk_norm")  # any switch with several values will do
    across = compare_across(sweep, "final_val_loss", "qk_norm")
    assert list(across.table.columns[:2]) == ["qk_norm", "variant"]


def test_across_suggests_the_field_that_varies_over_an_equally_close_constant_one(tmp_path):
    from errors import closest

    assert closest("d_modle", ["d_model", "wd_mode"]) == "wd_mode"  # a tie by letters, which the order broke badly
    for width in (128, 256):
        for seed in range(2):
            synthetic.write_run(tmp_path, f"w{width}-{seed}", sweep="wide", arm=f"w{width}", seed=seed, lr=1e-3,
                                final=3.0, steps=12,
                                config={"d_model": width, "wd_mode": "coupled", "attn_softcap": 30.0})
    sweep = load_sweep(tmp_path, "wide")
    with pytest.raises(AnalysisError, match=r"not a config field of sweep 'wide''s runs; did you mean 'd_model'\?"):
        check_across(sweep, "d_modle")
    with pytest.raises(AnalysisError, match=r"did you mean 'attn_softcap'\?"):  # nothing varying is close: any field
        check_across(sweep, "atn_softcap")


def test_a_sweep_at_one_scale_has_no_comparison_across(planted_store):
    assert compare_across(load_sweep(planted_store[0], "planted"), "final_val_loss") is None
