"""`expand(ablation)`: every cell of a sweep, resolved and validated before anything runs, in small pure
stages: the base configs → the rungs (`experiments.plan.rungs`: the base alone, or each rung of a ladder) →
per rung the grid's points (minus exclusions) → one resolved `Arm` per point (matched and budgeted) → its
LR × seed cells → validation. All invalid cells are reported together in one `SweepError`, each with its
reason."""

from __future__ import annotations

import math
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Mapping

from errors import ConfigError, closest
from experiments.declare.ablation import Ablation
from experiments.plan.cell import Cell
from experiments.plan.naming import BASE_ARM, arm_label, arm_name
from experiments.plan.rungs import Rung
from experiments.plan.rungs import rungs as resolve_rungs
from experiments.search.study import Study
from harness import calc
from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.run_configs import RunConfigs, field_owners, route
from harness.config.train import TrainConfig

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
    rungs: tuple[Rung, ...] = ()  # a ladder's rungs, smallest first (empty without a ladder)
    arm_rungs: Mapping[str, int] | None = None  # a ladder's arm → the index of its rung

    @property
    def name(self) -> str:
        return self.ablation.name

    def meta(self, source: str | None = None) -> dict[str, Any]:
        """The sweep's description for `db.write_sweep`."""
        meta: dict[str, Any] = {"question": self.ablation.question, "baseline": self.baseline, "axes": list(self.axes),
                "source": source, "primary": self.ablation.primary}
        if self.studies:
            meta |= {"studies": [study.record() for study in self.studies], "trials": self.ablation.trials}
        return meta

    @property
    def plan_cells(self) -> tuple[Cell, ...]:
        """The cells to store as the plan: none for a search, whose trials are recorded as they start."""
        return () if self.studies else self.cells


@dataclass(frozen=True)
class Arm:
    """One grid point at one rung, resolved: its configs matched to the rung's base and budgeted (LR and seed
    still the base's). `point` holds the rung's values too; `grid_name` is the grid point's own name."""

    name: str
    point: dict[str, Any]
    configs: RunConfigs
    residual: int | None
    params: int
    flops_per_token: int
    grid_name: str
    rung: Rung


class Problems:
    """Invalid cells collected by reason, so one error lists them all."""

    def __init__(self, ablation: Ablation) -> None:
        self.ablation, self.cells = ablation, 0
        self.by_reason: defaultdict[str, list[str]] = defaultdict(list)

    def add(self, reason: str, where: str, cells: int = 1) -> None:
        """`where` (an arm, an arm at an LR, a seed) holds `cells` invalid cells for `reason`."""
        self.by_reason[reason].append(where)
        self.cells += cells

    def raise_if_any(self, n_cells: int) -> None:
        if not self.by_reason:
            return
        lines = [f"  {', '.join(where[:3])}{f' (+{len(where) - 3} more)' if len(where) > 3 else ''}: {reason}"
                 for reason, where in self.by_reason.items()]
        which = f"all {n_cells}" if self.cells == n_cells else f"{self.cells} of {n_cells}"
        raise SweepError(f"ablation {self.ablation.name!r}: {which} cells are invalid:\n" + "\n".join(lines))


@contextmanager
def _about(ablation: Ablation) -> Iterator[None]:
    """A ConfigError inside becomes a SweepError that names the ablation."""
    try:
        yield
    except SweepError:
        raise
    except ConfigError as err:
        raise SweepError(f"ablation {ablation.name!r}: {err}") from None


def base_configs(ablation: Ablation, preset: str | None, overrides: Mapping[str, Any]) -> RunConfigs:
    """The configs every arm starts from: the preset (or the ablation's base), its train= and data= fields,
    then the `--set` overrides."""
    with _about(ablation):
        route(overrides, "--set")
        route(ablation.train or {}, "train=", only=TrainConfig)
        route(ablation.data or {}, "data=", only=DataConfig)
    return RunConfigs.of(preset or ablation.base, train=ablation.train, data=ablation.data, overrides=overrides)


def check_axes(ablation: Ablation) -> None:
    """Every grid axis is a config field that may be swept there."""
    if not list(ablation.grid):
        raise SweepError(f"ablation {ablation.name!r}: the grid is empty (an axis with no values?); nothing to run.")
    for axis in ablation.built_grid.axes:
        with _about(ablation):
            route({axis: None}, "the grid")
        lrs_given = ablation.lrs is not None or bool(ablation.ladder and ablation.ladder.lrs)
        if axis in RESERVED_AXES or (axis == "lr" and lrs_given):
            reason = RESERVED_AXES.get(axis, "lrs= already sweeps the LR; give it once")
            raise SweepError(f"ablation {ablation.name!r}: {axis!r} cannot be a grid axis: {reason}.")


def _matched(ablation: Ablation, model: ModelConfig, base: ModelConfig, seq_len: int) -> tuple[ModelConfig, int | None]:
    """The arm resized to the base's parameters or FLOPs per token, and the residual; (model, None) unmatched."""
    if ablation.match is None:
        return model, None
    count: Callable[[ModelConfig], int]
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


def _steps(budget: Mapping[str, float] | None, model: ModelConfig, train: TrainConfig, steps: int | None) -> int:
    """Steps of a cell: --steps, else the budget (tokens or FLOPs give each arm its own count), else train.steps."""
    if steps is not None or budget is None:
        return steps or train.steps
    (kind, amount), = budget.items()
    if kind == "steps":
        return int(amount)
    tokens = amount if kind == "tokens" else amount / calc.flops_per_token(model, train.seq_len)
    result = math.floor(tokens / train.tokens_per_step)
    if result < 1:
        raise ConfigError(f"budget={dict(budget)!r} is less than one step ({train.tokens_per_step:,} tokens) for this "
                          "arm")
    return result


def resolve_arm(ablation: Ablation, name: str, point: Mapping[str, Any], rung: Rung, steps: int | None) -> Arm:
    """The grid point applied to the rung's base, matched to it and budgeted (an LR changes none of this)."""
    configs = rung.configs.apply(point, "the grid")
    model, residual = _matched(ablation, configs.model, rung.configs.model, configs.train.seq_len)
    train = configs.train.replace(steps=_steps(rung.budget, model, configs.train, steps))
    return Arm(rung.arm(name), {**point, **rung.values}, RunConfigs(model, train, configs.data), residual,
               calc.params(model), calc.flops_per_token(model, train.seq_len), name, rung)


def arm_cells(arm: Arm, lr: float | None, n_seeds: int, first_seed: int, first_index: int) -> list[Cell]:
    """The arm's cells at one LR (None: the base's), seeds first_seed, first_seed + 1, ..."""
    train = arm.configs.train if lr is None else arm.configs.train.replace(lr=lr)
    RunConfigs(arm.configs.model, train, arm.configs.data).check()
    cells = []
    for i in range(n_seeds):
        seeded = RunConfigs(arm.configs.model, train.replace(seed=first_seed + i), arm.configs.data)
        cells.append(Cell(first_index + i, arm.name, dict(arm.point), seeded.train.lr, seeded.train.seed, seeded.model,
                          seeded.train, seeded.data,
                          seeded.key(), arm.params, arm.flops_per_token, arm.residual))
    return cells


def _unique(cells: list[Cell], where: str, seen: dict[str, str], problems: Problems) -> list[Cell]:
    """The cells whose configs no earlier cell has (two spellings of one arm would train the same run)."""
    kept = []
    for i, cell in enumerate(cells):
        if cell.run_id in seen:
            problems.add(f"same configs as {seen[cell.run_id]} (the arms differ only in spelling)", f"{where} seed {i}")
            continue
        seen[cell.run_id] = f"{where} seed {i}"
        kept.append(cell)
    return kept


def _baseline(ablation: Ablation, arms: Mapping[str, Arm], base_values: Mapping[str, Any]) -> str:
    """The arm the analysis compares against (with a ladder: that grid arm at the largest rung)."""
    top = max(arm.rung.index for arm in arms.values())
    arms = {name: arm for name, arm in arms.items() if arm.rung.index == top}
    if ablation.baseline is None:
        return next((name for name, arm in arms.items() if arm.grid_name == BASE_ARM), next(iter(arms)))
    unknown = [name for name in ablation.baseline if name not in field_owners()]
    if unknown:
        hint = closest(unknown[0], field_owners())
        raise SweepError(f"ablation {ablation.name!r}: baseline names no field {unknown[0]!r}" +
                         (f"; did you mean {hint!r}?" if hint else ""))
    found = [name for name, arm in arms.items()
             if all({**base_values, **arm.point}.get(k) == v for k, v in ablation.baseline.items())]
    if len(found) != 1:
        which = "no arm" if not found else f"{len(found)} arms ({', '.join(found)})"
        raise SweepError(f"ablation {ablation.name!r}: baseline={dict(ablation.baseline)!r} matches {which}; arms: "
                         f"{', '.join(arms)}.")
    return found[0]


def arm_labels(ablation: Ablation, base_values: Mapping[str, Any], arms: Mapping[str, Arm]) -> dict[str, str]:
    """arm name → display label: from the labels the grid gave its values, then `Ablation(arms=...)` over them
    (keyed by grid arm; a ladder's arm adds its rung); SweepError for an `arms=` key that names no arm."""
    grid_arms = list(dict.fromkeys(arm.grid_name for arm in arms.values()))  # in arm order, for the messages
    labels: dict[str, str] = {}
    for point, given in ablation.built_grid.labelled():
        label = arm_label(point, given, base_values)
        if label is not None:
            labels.setdefault(arm_name(point, base_values), label)
    for name in ablation.arms or {}:
        if name not in grid_arms:
            hint = closest(name, grid_arms)
            raise SweepError(f"ablation {ablation.name!r}: arms= names no arm {name!r}" +
                             (f"; did you mean {hint!r}?" if hint else f"; arms: {', '.join(grid_arms)}."))
    labels = {**{name: label for name, label in labels.items() if name in grid_arms}, **(ablation.arms or {})}
    return {name: arm.rung.arm(labels[arm.grid_name]) for name, arm in arms.items() if arm.grid_name in labels}


def kept_points(ablation: Ablation, rung: Rung) -> list[tuple[dict[str, Any], float | None]]:
    """Every (grid point, LR) the sweep runs at `rung`: the grid × the rung's LRs (None: the base's LR), minus
    exclude= (which sees the rung's values too)."""
    pairs = [(dict(point), lr) for point in ablation.built_grid for lr in (rung.lrs or (None,))]
    return [(point, lr) for point, lr in pairs
            if not ablation.excludes({**point, **rung.values, **({} if lr is None else {"lr": lr})})]


def resolve_cells(ablation: Ablation, rungs: tuple[Rung, ...], base_values: Mapping[str, Any],
                  steps: int | None) -> tuple[list[Cell], dict[str, Arm]]:
    """Every rung's arms and their LR × seed cells; SweepError listing every invalid cell at once."""
    problems, cells, seen = Problems(ablation), list[Cell](), dict[str, str]()
    arms: dict[str, Arm] = {}  # an arm is resolved and counted once, then shared by its LRs and seeds
    n_cells = 0
    for rung in rungs:
        points = kept_points(ablation, rung)
        n_cells += len(points) * rung.seeds
        for point, lr in points:
            name = arm_name(point, base_values)
            where = rung.arm(name) if lr is None else f"{rung.arm(name)} lr={lr:g}"
            try:
                arm = arms.get(rung.arm(name)) or resolve_arm(ablation, name, point, rung, steps)
                new = arm_cells(arm, lr, rung.seeds, rung.configs.train.seed, len(cells))
            except ConfigError as err:
                problems.add(str(err), where, rung.seeds)  # every seed of the arm at this LR
                continue
            arms[arm.name] = arm
            cells.extend(_unique(new, where, seen, problems))
    problems.raise_if_any(n_cells)
    if not cells:
        raise SweepError(f"ablation {ablation.name!r}: exclude= leaves no cell to run.")
    return cells, arms


def expand(
    ablation: Ablation, *, preset: str | None = None, steps: int | None = None, seeds: int | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Plan:
    """The sweep's cells: each rung (the base alone without a ladder) × each grid point (an arm) × each LR ×
    each seed, with matched sizes and budgets.

    `preset` replaces the base, `overrides` (field → value) apply to the base configs, `steps` and `seeds`
    replace the ablation's budget and seed count (every rung's). Raises SweepError listing every problem at once."""
    base = base_configs(ablation, preset, overrides or {})
    check_axes(ablation)
    base_values = {**base.model.to_dict(), **base.train.to_dict(), **base.data.to_dict()}
    try:
        rungs = resolve_rungs(ablation, base, seeds)
    except ConfigError as err:
        raise SweepError(str(err)) from None
    cells, arms = resolve_cells(ablation, rungs, base_values, steps)
    labels = arm_labels(ablation, base_values, arms)
    cells = [replace(cell, arm_label=labels.get(cell.arm)) for cell in cells]
    studies = _studies(ablation, ablation.tune, cells) if ablation.tune else ()
    cells = cells if ablation.tune else seed_major(cells)
    ladder = ablation.ladder is not None
    axes = ablation.built_grid.axes + (tuple(ablation.ladder.axes) if ablation.ladder is not None else ())
    return Plan(ablation, tuple(cells), tuple(arms), _baseline(ablation, arms, base_values), axes, studies,
                rungs if ladder else (), {name: arm.rung.index for name, arm in arms.items()} if ladder else None)


def seed_major(cells: list[Cell]) -> list[Cell]:
    """The cells in the order workers claim them: the first seed of every arm and LR, then the second, and so on,
    each round in the arm-major order (cells renumbered). Run one arm at a time, a sweep half done has nothing to
    compare; seed-major, every arm has results from its first round on. Order is no part of a plan's identity
    (`experiments.plan.identity` compares cells by arm, LR and seed), and a cell's run id is its configs' key, so a
    store whose plan was written arm-major is relaunched as it is. A search keeps its studies' order: their numbers
    name their trial files."""
    rank: dict[tuple, int] = defaultdict(int)
    rounds = []
    for cell in cells:
        rounds.append(rank[(cell.arm, cell.lr)])
        rank[(cell.arm, cell.lr)] += 1
    order = sorted(range(len(cells)), key=lambda i: rounds[i])  # stable: arm-major within a round
    return [replace(cells[i], index=position) for position, i in enumerate(order)]


def _studies(ablation: Ablation, tune: Mapping[str, Any], cells: list[Cell]) -> tuple[Study, ...]:
    """One study per cell (arm × LR × seed, seeds only with tune_per_seed), every tuned range checked."""
    with _about(ablation):
        route(dict(tune), "tune=")
    clash = [name for name in tune if name in ablation.built_grid.axes]
    if clash:
        raise SweepError(f"ablation {ablation.name!r}: {', '.join(clash)} is both a grid axis and tuned; give it once.")
    studies = tuple(Study(i, cell, dict(tune), ablation.trials, ablation.sampler, ablation.pruner,
                          ablation.confirm_seeds) for i, cell in enumerate(cells))
    problems = Problems(ablation)
    for study in studies:
        try:
            study.check_bounds()
        except ConfigError as err:
            problems.add(str(err), study.base.arm)
    problems.raise_if_any(len(studies))
    return studies
