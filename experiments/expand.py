"""`expand(ablation)`: every cell of a sweep, resolved and validated before anything runs. All invalid
cells are reported together in one `SweepError`, each with its reason."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Mapping

from harness import calc
from harness.config.base import ConfigError, closest
from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig
from harness.train.keys import run_key
from experiments.ablation import Ablation
from experiments.cell import Cell
from experiments.naming import BASE_ARM, arm_name
from experiments.study import Study

CONFIGS = (ModelConfig, TrainConfig, DataConfig)
OWNERS = {name: cls for cls in CONFIGS for name in cls.field_names()}
MATCH_TOLERANCE = 0.01  # a matched arm more than 1% off the base's count is not a fair comparison
RESERVED_AXES = {"seed": "use Ablation(seeds=N) (or --seeds): seed i of every arm shares its data order"}


class SweepError(ConfigError):
    """An ablation that cannot run as declared; the message lists every problem."""


@dataclass(frozen=True)
class Plan:
    """The expanded sweep: its cells in order (or, for a search, one study per arm and no fixed cells), its
    arms, the baseline arm and the grid's axes."""

    ablation: Ablation
    cells: tuple[Cell, ...]
    arms: tuple[str, ...]
    baseline: str
    axes: tuple[str, ...]
    studies: tuple[Study, ...] = ()

    @property
    def name(self) -> str:
        return self.ablation.name

    def meta(self, source: str | None = None) -> dict[str, Any]:
        """The sweep's description for `db.write_sweep`."""
        meta = {"question": self.ablation.question, "baseline": self.baseline, "axes": list(self.axes), "source": source}
        if self.studies:
            meta |= {"studies": [study.record() for study in self.studies], "trials": self.ablation.trials}
        return meta

    @property
    def plan_cells(self) -> tuple[Cell, ...]:
        """The cells to store as the plan: none for a search, whose trials are recorded as they start."""
        return () if self.studies else self.cells


def _split(ablation: Ablation, values: Mapping[str, Any], where: str) -> dict[type, dict[str, Any]]:
    parts: dict[type, dict[str, Any]] = {cls: {} for cls in CONFIGS}
    for name, value in values.items():
        if name not in OWNERS:
            hint = closest(name, OWNERS)
            raise SweepError(
                f"ablation {ablation.name!r}: {where} names no field {name!r}" + (f"; did you mean {hint!r}?" if hint else "")
                + " (any ModelConfig, TrainConfig or DataConfig field is an axis)."
            )
        parts[OWNERS[name]][name] = value
    return parts


def _owned(ablation: Ablation, values: Mapping[str, Any], where: str, cls: type) -> dict[str, Any]:
    """`values` when every field belongs to `cls` (train= takes TrainConfig fields, data= DataConfig ones)."""
    parts = _split(ablation, values, where)
    wrong = [name for other, fields in parts.items() if other is not cls for name in fields]
    if wrong:
        raise SweepError(f"ablation {ablation.name!r}: {where} sets {', '.join(wrong)}, not {cls.__name__} fields; "
                         "put model switches in base or the grid.")
    return parts[cls]


def _base_configs(ablation: Ablation, preset: str | None, overrides: Mapping[str, Any]) -> tuple[ModelConfig, TrainConfig, DataConfig]:
    from harness.presets import from_name

    parts = _split(ablation, overrides, "--set")
    base = preset or ablation.base
    model = from_name(base) if isinstance(base, str) else base
    model = model.replace(**parts[ModelConfig])
    train_fields = _owned(ablation, ablation.train or {}, "train=", TrainConfig)
    data_fields = _owned(ablation, ablation.data or {}, "data=", DataConfig)
    train = TrainConfig().replace(**{**train_fields, **parts[TrainConfig]})
    data = DataConfig().replace(**{**data_fields, **parts[DataConfig]})
    return model, train, data


def _matched(ablation: Ablation, model: ModelConfig, base: ModelConfig, seq_len: int) -> tuple[ModelConfig, int | None]:
    """The arm resized to the base's parameters or FLOPs per token, and the residual; (model, None) unmatched."""
    if ablation.match is None:
        return model, None
    if ablation.match == "params":
        target, count = calc.params(base), calc.params
        solve = lambda: calc.iso_param(model, target, solve=ablation.solve)  # noqa: E731
    else:
        target, count = calc.flops_per_token(base, seq_len), lambda m: calc.flops_per_token(m, seq_len)
        solve = lambda: calc.iso_flops(model, target, seq_len, solve=ablation.solve)  # noqa: E731
    if count(model) == target:
        return model, 0
    matched, residual = solve()
    if abs(residual) > MATCH_TOLERANCE * target:
        raise ConfigError(
            f"match={ablation.match!r} cannot be met by solving {ablation.solve}: the closest is {count(matched):,} "
            f"for a target of {target:,} (residual {residual:+,}, over {MATCH_TOLERANCE:.0%})"
        )
    return matched, residual


def _steps(ablation: Ablation, model: ModelConfig, train: TrainConfig, steps: int | None) -> int:
    """Steps of a cell: --steps, else the budget (tokens or FLOPs give each arm its own count), else train.steps."""
    if steps is not None or ablation.budget is None:
        return steps or train.steps
    (kind, amount), = ablation.budget.items()
    if kind == "steps":
        return int(amount)
    tokens = amount if kind == "tokens" else amount / calc.flops_per_token(model, train.seq_len)
    result = math.floor(tokens / train.tokens_per_step)
    if result < 1:
        raise ConfigError(f"budget={dict(ablation.budget)!r} is less than one step ({train.tokens_per_step:,} tokens) for this arm")
    return result


def _arm_configs(ablation: Ablation, parts: dict[type, dict[str, Any]], base_model: ModelConfig,
                 base_train: TrainConfig, base_data: DataConfig, steps: int | None) -> tuple:
    """(model, matched residual, train, data, params, FLOPs per token) of one arm: the grid point applied,
    matched and budgeted (an LR changes none of these)."""
    model = base_model.replace(**parts[ModelConfig])
    train = base_train.replace(**parts[TrainConfig])
    model, residual = _matched(ablation, model, base_model, train.seq_len)
    train = train.replace(steps=_steps(ablation, model, train, steps))
    data = base_data.replace(**parts[DataConfig])
    return model, residual, train, data, calc.params(model), calc.flops_per_token(model, train.seq_len)


def _baseline(ablation: Ablation, arms: dict[str, dict[str, Any]]) -> str:
    if ablation.baseline is None:
        return BASE_ARM if BASE_ARM in arms else next(iter(arms))
    unknown = [name for name in ablation.baseline if name not in OWNERS]
    if unknown:
        raise SweepError(f"ablation {ablation.name!r}: baseline names no field {unknown[0]!r}" +
                         (f"; did you mean {closest(unknown[0], OWNERS)!r}?" if closest(unknown[0], OWNERS) else ""))
    found = [arm for arm, values in arms.items() if all(values.get(k) == v for k, v in ablation.baseline.items())]
    if len(found) != 1:
        which = "no arm" if not found else f"{len(found)} arms ({', '.join(found)})"
        raise SweepError(f"ablation {ablation.name!r}: baseline={dict(ablation.baseline)!r} matches {which}; arms: {', '.join(arms)}.")
    return found[0]


def _report(ablation: Ablation, problems: dict[str, list[str]], n_cells: int) -> None:
    lines = [f"  {', '.join(where[:3])}{f' (+{len(where) - 3} more)' if len(where) > 3 else ''}: {reason}"
             for reason, where in problems.items()]
    total = sum(len(where) for where in problems.values())
    raise SweepError(f"ablation {ablation.name!r}: {total} of {n_cells} cells are invalid:\n" + "\n".join(lines))


def expand(
    ablation: Ablation, *, preset: str | None = None, steps: int | None = None, seeds: int | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Plan:
    """The sweep's cells: each grid point (an arm) × each LR × each seed, with matched sizes and budgets.

    `preset` replaces the base, `overrides` (field → value) apply to the base configs, `steps` and `seeds`
    replace the ablation's budget and seed count. Raises SweepError listing every problem at once."""
    from harness.cli.run_config import check_compatible

    base_model, base_train, base_data = _base_configs(ablation, preset, overrides or {})
    points = list(ablation.grid)
    if not points:
        raise SweepError(f"ablation {ablation.name!r}: the grid is empty (an axis with no values?); nothing to run.")
    for axis in ablation.grid.axes:
        _split(ablation, {axis: None}, "the grid")
        if axis in RESERVED_AXES or (axis == "lr" and ablation.lrs is not None):
            reason = RESERVED_AXES.get(axis, "lrs= already sweeps the LR; give it once")
            raise SweepError(f"ablation {ablation.name!r}: {axis!r} cannot be a grid axis: {reason}.")
    base_values = {**base_model.to_dict(), **base_train.to_dict(), **base_data.to_dict()}
    n_seeds = seeds or ablation.seeds
    problems: dict[str, list[str]] = defaultdict(list)
    cells: list[Cell] = []
    arms: dict[str, dict[str, Any]] = {}
    by_key: dict[str, str] = {}
    arm_configs: dict[str, tuple] = {}  # an arm is resolved and counted once, then shared by its LRs and seeds
    n_total = 0
    for point in points:
        name = arm_name(point, base_values)
        parts = {cls: {k: v for k, v in point.items() if OWNERS[k] is cls} for cls in CONFIGS}
        for lr in ablation.lrs or (None,):
            n_total += n_seeds
            if ablation.excludes({**point, **({} if lr is None else {"lr": lr})}):
                n_total -= n_seeds
                continue
            where = name if lr is None else f"{name} lr={lr:g}"
            try:
                if name not in arm_configs:
                    arm_configs[name] = _arm_configs(ablation, parts, base_model, base_train, base_data, steps)
                model, residual, train, data, params, flops = arm_configs[name]
                if lr is not None:
                    train = train.replace(lr=lr)
                check_compatible(model, train)
            except ConfigError as err:
                problems[str(err)].append(where)
                continue
            arms.setdefault(name, {**base_values, **point})
            for i in range(n_seeds):
                seeded = train.replace(seed=base_train.seed + i)
                key = run_key(model, seeded, data)
                if key in by_key:
                    problems[f"same configs as {by_key[key]} (the arms differ only in spelling)"].append(f"{where} seed {i}")
                    continue
                by_key[key] = f"{where} seed {i}"
                cells.append(Cell(len(cells), name, dict(point), seeded.lr, seeded.seed, model, seeded, data, key,
                                  params, flops, residual))
    if problems:
        _report(ablation, problems, n_total)
    if not cells:
        raise SweepError(f"ablation {ablation.name!r}: exclude= leaves no cell to run.")
    studies = _studies(ablation, cells) if ablation.tune else ()
    return Plan(ablation, tuple(cells), tuple(arms), _baseline(ablation, arms), ablation.grid.axes, studies)


def _studies(ablation: Ablation, cells: list[Cell]) -> tuple[Study, ...]:
    """One study per cell (arm × LR × seed, seeds only with tune_per_seed), every tuned range checked."""
    _split(ablation, dict(ablation.tune), "tune=")
    clash = [name for name in ablation.tune if name in ablation.grid.axes]
    if clash:
        raise SweepError(f"ablation {ablation.name!r}: {', '.join(clash)} is both a grid axis and tuned; give it once.")
    studies = tuple(Study(i, cell, dict(ablation.tune), ablation.trials, ablation.sampler, ablation.pruner,
                          ablation.confirm_seeds) for i, cell in enumerate(cells))
    problems: dict[str, list[str]] = defaultdict(list)
    for study in studies:
        try:
            study.check_bounds()
        except ConfigError as err:
            problems[str(err)].append(study.base.arm)
    if problems:
        _report(ablation, problems, len(studies))
    return studies
