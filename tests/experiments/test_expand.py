"""expand(): arms named by what differs from the base, LRs × seeds, matching, budgets, exclusions, the
baseline, and every invalid cell reported at once before anything runs."""

import re

import pytest

from experiments import Ablation, SweepError, expand, grid, zip_
from harness import calc
from harness.train.keys import run_key


def make(**kwargs):
    fields = dict(name="t", question="does it help?", base="tiny", grid=grid(qk_norm=["none", "rmsnorm"]))
    return Ablation(**{**fields, **kwargs})


def test_cells_are_arms_times_lrs_times_seeds_with_readable_names_and_run_keys():
    plan = expand(make(lrs=[1e-3, 1e-2], seeds=2, train={"steps": 7}))
    assert [c.label for c in plan.cells[:4]] == [  # seed-major: every arm and LR gets its first seed first
        "base lr=0.001 seed=0", "base lr=0.01 seed=0",
        "qk_norm=rmsnorm lr=0.001 seed=0", "qk_norm=rmsnorm lr=0.01 seed=0"]
    assert [c.index for c in plan.cells] == list(range(8))
    assert plan.arms == ("base", "qk_norm=rmsnorm") and plan.baseline == "base"
    cell = plan.cells[-1]
    assert (cell.arm, cell.lr, cell.seed, cell.train.steps) == ("qk_norm=rmsnorm", 1e-2, 1, 7)
    assert cell.run_id == run_key(cell.model, cell.train, cell.data)  # the id `harness run` gives these configs
    assert len({c.run_id for c in plan.cells}) == 8


def test_seed_i_of_every_arm_shares_its_seed_so_data_order_is_paired():
    plan = expand(make(seeds=3, train={"seed": 10}))
    by_arm = {}
    for cell in plan.cells:
        by_arm.setdefault(cell.arm, []).append(cell.train.seed)
    assert by_arm == {"base": [10, 11, 12], "qk_norm=rmsnorm": [10, 11, 12]}


def test_match_params_resizes_each_arm_and_records_the_residual():
    plan = expand(make(grid=grid(mlp=["gelu", "swiglu"]), match="params"))
    target = calc.params(expand(make(grid=grid())).cells[0].model)
    for cell in plan.cells:
        assert cell.params - target == cell.matched_residual and abs(cell.matched_residual) <= 0.01 * target
    assert plan.cells[0].model.d_ff != 4 * 64  # gelu's hidden size was solved, not the dense default


def test_flop_budget_gives_each_arm_its_own_steps():
    plan = expand(make(grid=grid(zip_(n_layers=[1, 4], d_model=[64, 64])), budget={"flops": 5e12},
                       train={"seq_len": 64}))
    small, big = plan.cells
    assert small.train.steps > big.train.steps
    for cell in plan.cells:
        spent = cell.train.steps * cell.train.tokens_per_step * cell.flops_per_token
        assert spent <= 5e12 < (cell.train.steps + 1) * cell.train.tokens_per_step * cell.flops_per_token
    assert expand(make(budget={"tokens": 10 * 2048})).cells[0].train.steps == 10
    assert expand(make(budget={"steps": 10}), steps=3).cells[0].train.steps == 3  # --steps wins


def test_exclude_by_predicate_or_partial_dicts_including_lr():
    by_dict = expand(make(lrs=[1e-3, 1e-1], exclude=[{"qk_norm": "none", "lr": 1e-1}]))
    assert [c.label for c in by_dict.cells] == ["base lr=0.001 seed=0", "qk_norm=rmsnorm lr=0.001 seed=0",
                                                "qk_norm=rmsnorm lr=0.1 seed=0"]
    by_predicate = expand(make(exclude=lambda p: p.get("qk_norm") == "rmsnorm"))
    assert [c.arm for c in by_predicate.cells] == ["base"]


def test_baseline_must_match_exactly_one_arm():
    assert expand(make(baseline={"qk_norm": "rmsnorm"})).baseline == "qk_norm=rmsnorm"
    with pytest.raises(SweepError, match=r"baseline=\{'qk_norm': 'layernorm'\} matches no arm"):
        expand(make(baseline={"qk_norm": "layernorm"}))
    with pytest.raises(SweepError, match="matches 2 arms"):
        expand(make(baseline={"norm": "rmsnorm"}))


@pytest.mark.parametrize("kwargs, message", [
    (dict(grid=grid(qk_nrom=["rmsnorm"])), "names no field 'qk_nrom'; did you mean 'qk_norm'?"),
    (dict(grid=grid(qk_norm=["rmsnrm"])), "Did you mean 'rmsnorm'?"),
    (dict(grid=grid(norm=[])), "the grid is empty"),
    (dict(grid=grid(seed=[1, 2])), "'seed' cannot be a grid axis"),
    (dict(grid=grid(lr=[1e-3]), lrs=[1e-3]), "'lr' cannot be a grid axis"),
    (dict(grid=grid(n_layers=[1, 8]), match="params", solve="d_model"), "cannot be met by solving d_model"),
    (dict(train={"d_model": 3}), "train= sets d_model, not TrainConfig fields"),
    (dict(exclude=lambda p: True), "exclude= leaves no cell to run"),
])
def test_bad_ablations_fail_with_a_specific_message(kwargs, message):
    with pytest.raises(SweepError, match=re.escape(message)):
        expand(make(**kwargs))


def test_every_invalid_cell_is_reported_at_once_with_its_reason():
    bad = make(grid=grid(n_heads=[3, 4, 5], d_model=[64, 66]), lrs=[1e-3, 1e-6], train={"min_lr": 1e-5})
    with pytest.raises(SweepError) as info:
        expand(bad)
    message = str(info.value)
    assert message.startswith("ablation 't': ") and " of 12 cells are invalid:" in message
    assert "min_lr" in message and "n_heads" in message  # different reasons, each listed
    assert len(message.splitlines()) >= 3


@pytest.mark.parametrize("heads, invalid", [((3, 5), "all 12"), ((3, 4), "6 of 12")])
def test_the_count_of_invalid_cells_counts_every_seed(heads, invalid):
    # tiny's d_model 128 takes 4 heads, not 3 or 5: each invalid arm is 2 LRs × 3 seeds = 6 cells of the 12
    with pytest.raises(SweepError) as info:
        expand(make(grid=grid(n_heads=list(heads), n_kv_heads=[1]), lrs=[1e-3, 1e-2], seeds=3))
    assert f"{invalid} cells are invalid:" in str(info.value)


def test_arms_that_resolve_to_the_same_configs_are_refused():
    with pytest.raises(SweepError, match="same configs as"):
        expand(make(grid=grid(d_ff=[None, 192])))  # 192 is tiny's derived SwiGLU size


def test_ablation_arguments_are_checked_at_construction():
    from errors import ConfigError

    for kwargs, message in [(dict(seeds=0), "seeds=0"), (dict(lrs=[]), "lrs="), (dict(match="size"), "match='size'"),
                            (dict(budget={"epochs": 1}), "budget="), (dict(name="a/b"), "name must be"),
                            (dict(question=""), "question must be")]:
        with pytest.raises(ConfigError, match=message):
            make(**kwargs)


@pytest.mark.slow
def test_ten_thousand_cells_expand_without_torch(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from experiments import Ablation, expand, grid; "
            "a = Ablation('big', 'q?', 'tiny', grid(d_model=list(range(32, 32 + 16 * 25, 16)), n_layers=[1, 2, 3, 4], "
            "mlp=['swiglu', 'gelu', 'relu', 'geglu'], qk_norm=['none', 'rmsnorm', 'layernorm']), lrs=[1e-3, 3e-3, "
            "1e-2], seeds=3); print(len(expand(a).cells), 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["10800", "False"]


def test_cells_run_seed_major_and_keep_the_run_ids_harness_run_gives_them():
    from harness.config.run_configs import RunConfigs

    plan = expand(make(lrs=[1e-3, 1e-2], seeds=3, train={"steps": 7}))
    assert [(c.seed, c.arm, c.lr) for c in plan.cells] == [
        (seed, arm, lr) for seed in range(3) for arm in ("base", "qk_norm=rmsnorm") for lr in (1e-3, 1e-2)]
    for cell in plan.cells:  # `harness run --preset tiny --set ...` with the cell's values: the same key as ever
        changed = {} if cell.arm == "base" else {"qk_norm": "rmsnorm"}
        alone = RunConfigs.of("tiny", overrides={**changed, "steps": 7, "lr": cell.lr, "seed": cell.seed})
        assert cell.run_id == alone.key()

