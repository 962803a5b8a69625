"""A ladder in the ablation: rungs of growing size, each with its own budget rule, seeds and LRs; every bad input
refused with one line naming the rung or the field, before anything is computed."""

import re

import pytest

from errors import ConfigError
from experiments import Ablation, SweepError, expand, grid
from experiments.declare.ladder import ladder
from experiments.plan.rungs import RUNG_SEPARATOR
from harness import calc

TRAIN = {"batch_size": 4, "seq_len": 32}


def make(**kwargs):
    fields = dict(name="lad", question="does it hold at scale?", base="tiny", grid=grid(qk_norm=["none", "rmsnorm"]),
                  train=TRAIN,
                  ladder=ladder(d_model=[64, 128], n_layers=[2, 3], tokens=TRAIN["batch_size"] * TRAIN["seq_len"] * 10))
    return Ablation(**{**fields, **kwargs})


def test_every_arm_runs_at_every_rung_named_grid_arm_at_rung():
    plan = expand(make())
    assert plan.arms == ("base@d_model=64,n_layers=2", "qk_norm=rmsnorm@d_model=64,n_layers=2",
                         "base@d_model=128,n_layers=3", "qk_norm=rmsnorm@d_model=128,n_layers=3")
    assert plan.baseline == "base@d_model=128,n_layers=3"  # the decision that matters is at the largest rung
    assert plan.axes == ("qk_norm", "d_model", "n_layers")
    big = [c for c in plan.cells if plan.arm_rungs[c.arm] == 1]
    assert {(c.model.d_model, c.model.n_layers) for c in big} == {(128, 3)}
    assert big[0].arm_values == {"qk_norm": "none", "d_model": 128, "n_layers": 3}
    assert all(c.train.steps == 10 for c in plan.cells)  # tokens=N: every rung trains the same data
    assert [r.label for r in plan.rungs] == ["d_model=64,n_layers=2", "d_model=128,n_layers=3"]


def test_tokens_per_param_gives_each_rung_its_own_budget_from_its_base_model():
    plan = expand(make(ladder=ladder(d_model=[64, 128, 256], n_layers=[2, 2, 4], tokens_per_param=20)))
    for rung in plan.rungs:
        params = calc.params(rung.configs.model)  # the oracle: harness.calc on the base at that size
        steps = {c.train.steps for c in plan.cells if plan.arm_rungs[c.arm] == rung.index}
        assert steps == {int(20 * params // (TRAIN["batch_size"] * TRAIN["seq_len"]))}


def test_flops_per_rung_give_each_arm_its_own_steps_never_over_budget():
    budgets = [2e11, 8e11]
    plan = expand(make(ladder=ladder(d_model=[64, 128], n_layers=[1, 2], flops=budgets)))
    for cell in plan.cells:
        spent = cell.train.steps * cell.train.tokens_per_step * cell.flops_per_token
        budget = budgets[plan.arm_rungs[cell.arm]]
        assert spent <= budget < spent + cell.train.tokens_per_step * cell.flops_per_token


def test_seeds_and_lrs_per_rung():
    plan = expand(make(ladder=ladder(d_model=[64, 128], n_layers=[2, 3], tokens=2048, seeds=[3, 1],
                                     lrs=[[1e-3, 3e-3], [1e-3]])))
    small = [c for c in plan.cells if plan.arm_rungs[c.arm] == 0]
    big = [c for c in plan.cells if plan.arm_rungs[c.arm] == 1]
    assert len(small) == 2 * 2 * 3 and len(big) == 2 * 1 * 1
    assert {c.lr for c in small} == {1e-3, 3e-3} and {c.seed for c in big} == {0}
    # --seeds wins
    assert len(expand(make(ladder=ladder(d_model=[64, 128], tokens=2048, seeds=[3, 1])), seeds=2).cells) == 2 * 2 * 2


def test_labels_and_exclude_apply_per_rung():
    plan = expand(make(grid=grid(qk_norm={"none": "none", "QK-norm": "rmsnorm"}), arms={"base": "plain"},
                       exclude=[{"qk_norm": "rmsnorm", "d_model": 128}]))
    assert {c.arm: c.arm_label for c in plan.cells} == {
        "base@d_model=64,n_layers=2": "plain@d_model=64,n_layers=2",
        "qk_norm=rmsnorm@d_model=64,n_layers=2": "QK-norm@d_model=64,n_layers=2",
        "base@d_model=128,n_layers=3": "plain@d_model=128,n_layers=3"}


def test_match_resizes_each_arm_to_its_rungs_base():
    plan = expand(make(grid=grid(mlp=["gelu", "swiglu"]), match="params"))
    for cell in plan.cells:
        rung = plan.rungs[plan.arm_rungs[cell.arm]]
        assert abs(cell.params - calc.params(rung.configs.model)) <= 0.01 * calc.params(rung.configs.model)


def test_the_arm_separator_is_the_one_analysis_reads():
    from analysis.ladder import RUNG_FIELDS, SEPARATOR
    from experiments.declare.ladder import RUNG_FIELDS as DECLARED

    assert (SEPARATOR, RUNG_FIELDS) == (RUNG_SEPARATOR, DECLARED)


@pytest.mark.parametrize("kwargs, message", [
    (dict(grid=grid(d_model=[64, 96])),
     "d_model is both a ladder axis and a grid axis; the ladder sets it per rung, give it once"),
    (dict(budget={"steps": 10}), "budget= with ladder=: the ladder's budget rule sets each rung's budget"),
    (dict(lrs=[1e-3], ladder=ladder(d_model=[64, 128], tokens=1e4, lrs=[1e-3])),
     "lrs= with ladder=: LRs are given both here and in ladder(lrs=)"),
    (dict(match="params", solve="d_model"),
     "solve= with ladder=: match= would re-solve d_model, a ladder axis, and undo the rungs"),
    (dict(ladder={"d_model": [64, 128]}), "ladder={'d_model': [64, 128]} must be ladder(...)"),
])
def test_ablation_refuses_a_ladder_that_clashes(kwargs, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        make(**kwargs)


@pytest.mark.parametrize("kwargs, message", [
    (dict(d_model=[64, 128]), "give exactly one budget rule of tokens=, tokens_per_param=, flops= (got none)"),
    (dict(d_model=[64, 128], tokens=1e5, flops=1e12),
     "give exactly one budget rule of tokens=, tokens_per_param=, flops= (got tokens, flops)"),
    (dict(d_model=[64, 128], tokens_per_param=-20), "tokens_per_param=-20: each entry must be a positive number"),
    (dict(d_model=[64, 128], flops=[1e12, 2e12, 3e12]),
     "flops=[1000000000000.0, 2000000000000.0, 3000000000000.0] has 3 entries for 2 rungs"),
    (dict(d_model=[64], tokens=1e5), "a ladder needs at least two rungs"),
    (dict(d_model=[64, 128], n_layers=[2], tokens=1e5),
     "every axis needs one value per rung; got d_model: 2, n_layers: 1"),
    (dict(d_modle=[64, 128], tokens=1e5),
     "'d_modle' cannot be a rung axis: a ladder climbs ModelConfig fields (and batch_size, seq_len, grad_accum); did "
     "you mean 'd_model'?"),
    (dict(n_heads=[2, 4], tokens=1e5),
     "a ladder climbs d_model or n_layers (the store knows a rung by them); axes given: n_heads"),
    (dict(d_model=[64, 64], n_layers=[2, 2], tokens=1e5), "two rungs have the same d_model and n_layers"),
    (dict(d_model=[64, 128], tokens=1e5, seeds=[2, 0]), "seeds=[2, 0]: each entry must be an integer ≥ 1"),
    (dict(d_model=[64, 128], tokens=1e5, lrs=[[1e-3], []]),
     "lrs=[[0.001], []] must be a list of positive LRs for every rung"),
])
def test_bad_ladders_fail_at_declaration_with_one_line(kwargs, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as info:
        ladder(**kwargs)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("rungs, message", [
    (dict(d_model=[64, 128], seq_len=[32, 256], tokens=1e6),
     "ablation 'lad': ladder rung 1 (d_model=128,seq_len=256): TrainConfig.seq_len=256 is invalid: the model takes "
     "sequences of at most max_seq_len=128 tokens"),
    (dict(d_model=[64, 66], tokens=1e6), "ablation 'lad': ladder rung 1 (d_model=66): ModelConfig"),
    (dict(d_model=[128, 64], tokens=1e6),
     "ablation 'lad': ladder rung 1 (d_model=64) has 164,160 parameters, no more than rung 0's"),
    (dict(d_model=[64, 128], tokens=[1e6, 100]),
     "ablation 'lad': ladder rung 1 (d_model=128): its budget of 100 tokens is less than one step (128 tokens)"),
])
def test_rungs_the_model_cannot_take_are_one_line_naming_the_rung(rungs, message):
    with pytest.raises(SweepError, match=re.escape(message)) as info:
        expand(make(ladder=ladder(**rungs)))
    assert "\n" not in str(info.value)


LADDER_FILE = '''
from experiments import Ablation, grid, ladder

ablation = Ablation("lad", "Does QK-norm hold at scale?", base="tiny", grid=grid(qk_norm=["none", "rmsnorm"]),
                    train=dict(batch_size=4, seq_len=32), ladder=ladder({rungs}))
'''


def test_the_dry_run_shows_each_rungs_size_tokens_and_flops_and_the_ladders_compute(tmp_path, capsys):
    from cli.main import main

    path = tmp_path / "lad.py"
    path.write_text(LADDER_FILE.format(rungs="d_model=[64, 128], n_layers=[2, 3], tokens_per_param=2, seeds=[2, 1]"))
    assert main(["sweep", str(path), "--dry-run", "--results", str(tmp_path / "results")]) == 0
    out = capsys.readouterr().out
    plan = expand(make(ladder=ladder(d_model=[64, 128], n_layers=[2, 3], tokens_per_param=2, seeds=[2, 1])))
    rows = [line.split() for line in out.splitlines() if re.match(r"\s+[01]\s+(64|128)\s", line)]
    assert len(rows) == 2
    flops = []
    for rung, row in zip(plan.rungs, rows):
        cells = [c for c in plan.cells if plan.arm_rungs[c.arm] == rung.index]
        # the oracle: the cells' own counts
        spent = [c.train.steps * c.train.tokens_per_step * c.flops_per_token for c in cells]
        flops.append(sum(spent))
        assert row[:4] == [str(rung.index), *map(str, rung.values.values()), f"{calc.params(rung.configs.model):,}"]
        tokens = {c.train.steps * c.train.tokens_per_step for c in cells}
        assert (row[4:] == [f"{tokens.pop():.3g}", f"{spent[0]:.3g}", str(len(cells)), f"{sum(spent):.3g}"]
                and not tokens)
    assert (f"ladder: 2 rungs, {sum(flops):.3g} training FLOPs in all ({flops[-1] / sum(flops):.0%} of it in the "
            "largest rung).") in out
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("rungs, message", [
    ("d_model=[64, 128], seq_len=[32, 256], tokens=1e5",
     "ladder rung 1 (d_model=128,seq_len=256): TrainConfig.seq_len=256 is invalid"),
    ("d_model=[64, 128], tokens_per_param=0", "ladder(...): tokens_per_param=0: each entry must be a positive number"),
    ("d_model=[64, 128], qk_norm=['none', 'rmsnorm'], tokens=1e5", "qk_norm is both a ladder axis and a grid axis"),
])
def test_bad_ladders_exit_2_with_one_line_and_nothing_written(tmp_path, capsys, rungs, message):
    from cli.main import main

    path = tmp_path / "lad.py"
    path.write_text(LADDER_FILE.format(rungs=rungs))
    assert main(["sweep", str(path), "--results", str(tmp_path / "results")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err
    assert not (tmp_path / "results").exists()
