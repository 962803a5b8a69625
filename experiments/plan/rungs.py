"""The rung stage of `expand`: each scale of a sweep resolved against the base configs, with its budget, seeds
and LRs. An ablation without a ladder is one rung, the base itself; a ladder's rungs are checked here, each
problem one line naming the rung: a rung the model cannot take (a sequence over `max_seq_len`, a width the
heads do not divide), rungs that do not grow, a budget under one step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from errors import ConfigError
from experiments.declare.ablation import Ablation
from experiments.declare.ladder import Ladder
from harness import calc
from harness.config.run_configs import RunConfigs

RUNG_SEPARATOR = "@"  # a ladder's arm is `<grid arm>@<rung>`: `qk_norm=rmsnorm@d_model=128,n_layers=4`


@dataclass(frozen=True)
class Rung:
    """One scale of a sweep: the ladder's values there (`{}` without a ladder), the base configs at that size,
    the budget each of its cells trains to (`{'steps'|'tokens'|'flops': N}`, None: the train config's steps),
    its seeds and LRs (None: the base's LR)."""

    index: int
    values: dict[str, Any]
    label: str | None
    configs: RunConfigs
    budget: Mapping[str, float] | None
    seeds: int
    lrs: Sequence[float] | None

    def arm(self, name: str) -> str:
        """The name of grid arm `name` at this rung."""
        return name if self.label is None else f"{name}{RUNG_SEPARATOR}{self.label}"

    @property
    def params(self) -> int:
        """Parameters of the base model at this rung."""
        return calc.params(self.configs.model)


def _budget(kind: str, amount: float, configs: RunConfigs) -> dict[str, float]:
    """A rung's budget rule as the budget of its cells: tokens per parameter become tokens."""
    if kind == "tokens_per_param":
        return {"tokens": amount * calc.params(configs.model)}
    return {kind: amount}


def _check_budget(budget: Mapping[str, float], configs: RunConfigs) -> None:
    (kind, amount), = budget.items()
    tokens = amount if kind == "tokens" else amount / calc.flops_per_token(configs.model, configs.train.seq_len)
    if tokens < configs.train.tokens_per_step:
        raise ConfigError(f"its budget of {tokens:,.0f} tokens is less than one step "
                          f"({configs.train.tokens_per_step:,} tokens); raise the budget rule or lower "
                          "batch_size/seq_len")


def _ladder_rung(ablation: Ablation, ladder: Ladder, base: RunConfigs, index: int, seeds: int | None) -> Rung:
    """Rung `index` of the ablation's `ladder`, checked (ConfigError: why this rung cannot run)."""
    configs = base.apply(ladder.values(index), "ladder(...)").check()
    kind, amounts = ladder.budget
    budget = _budget(kind, amounts[index], configs)
    _check_budget(budget, configs)
    rung_seeds = seeds or (ladder.seeds[index] if ladder.seeds else ablation.seeds)
    lrs = ladder.lrs[index] if ladder.lrs else ablation.lrs
    return Rung(index, ladder.values(index), ladder.label(index), configs, budget, rung_seeds, lrs)


def rungs(ablation: Ablation, base: RunConfigs, seeds: int | None = None) -> tuple[Rung, ...]:
    """The sweep's rungs, smallest first (`seeds`: --seeds, which replaces every rung's); without a ladder the one
    rung of the base. ConfigError, one line naming the ablation and the rung, for a rung that cannot run."""
    if ablation.ladder is None:
        return (Rung(0, {}, None, base, ablation.budget, seeds or ablation.seeds, ablation.lrs),)
    found: list[Rung] = []
    for index in range(ablation.ladder.n_rungs):
        where = f"ablation {ablation.name!r}: ladder rung {index} ({ablation.ladder.label(index)})"
        try:
            rung = _ladder_rung(ablation, ablation.ladder, base, index, seeds)
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
        if found and rung.params <= found[-1].params:
            raise ConfigError(f"{where} has {rung.params:,} parameters, no more than rung {index - 1}'s "
                              f"{found[-1].params:,}: the rungs of a ladder must grow")
        found.append(rung)
    return tuple(found)
