"""`Ablation`: one research question as data: a base model, a grid of switches, seeds, LRs, a budget and the
baseline arm. `experiments.plan.expand` turns it into cells; nothing here imports torch."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NoReturn, Sequence, cast

from errors import ConfigError
from experiments.declare.grid import Grid
from experiments.declare.grid import grid as make_grid
from experiments.declare.ladder import Ladder
from harness.config.model import ModelConfig

MATCHES = ("params", "flops")
SAMPLERS = ("tpe", "random")
PRUNERS = ("median", "none")
SOLVES = ("d_ff", "d_model")
BUDGETS = ("steps", "tokens", "flops")

Exclude = Callable[[dict[str, Any]], bool] | Sequence[Mapping[str, Any]] | None


def _fail(name: str, message: str) -> NoReturn:
    raise ConfigError(f"Ablation {name!r}: {message}")


@dataclass(frozen=True)
class Ablation:
    """A sweep to run. `base`: a preset name or a ModelConfig; `grid`: `grid(...)` (or a dict of axes);
    `train`/`data`: TrainConfig/DataConfig field overrides for every cell; `seeds`: repeats (seed i of every
    arm sees the same data order); `lrs`: every arm at each LR; `match`: 'params' or 'flops' resizes each arm
    (solving `solve`) to the base's count; `budget`: {'steps'|'tokens'|'flops': N} per cell; `baseline`: a
    partial dict naming the arm the analysis compares against (default: the base arm, else the first).
    `tune`: {field: LogUniform/Uniform/IntUniform/Choice} makes each arm an Optuna search of `trials` trials
    (`sampler` 'tpe' or 'random', `pruner` 'median' or 'none'), one study per arm, or per arm and seed with
    `tune_per_seed=True`; `confirm_seeds` N reruns each finished study's chosen configuration on N fresh seeds,
    and the comparison tests those runs instead of the trials the choice was made on. `arms`: {arm name: display
    label} for tables and legends (over any label the grid gave; names, the arms' identity, never change).
    `ladder`: `ladder(...)` runs every arm at each rung of growing size, each rung with its own budget (which
    replaces `budget`), seeds and LRs (docs/sweeps.md#a-scale-ladder). `primary`: the signal the question is about,
    which the report's answer leads with: 'loss' (the default), 'divergence', 'attn_logit' (peak attention logit)
    or 'lr_sensitivity' (db.sweeps.SIGNALS)."""

    name: str
    question: str
    base: str | ModelConfig
    grid: Grid | Mapping[str, Any] = field(default_factory=make_grid)
    exclude: Exclude = None
    seeds: int = 1
    lrs: Sequence[float] | None = None
    train: Mapping[str, Any] | None = None
    data: Mapping[str, Any] | None = None
    match: str | None = None
    solve: str = "d_ff"
    budget: Mapping[str, int] | None = None
    baseline: Mapping[str, Any] | None = None
    tune: Mapping[str, Any] | None = None
    trials: int = 16
    sampler: str = "tpe"
    pruner: str = "median"
    tune_per_seed: bool = False
    confirm_seeds: int = 0
    arms: Mapping[str, str] | None = None
    ladder: Ladder | None = None
    primary: str = "loss"

    @property
    def built_grid(self) -> Grid:
        """`grid` once built: __post_init__ makes a Grid of a dict of axes (and refuses anything else)."""
        return cast(Grid, self.grid)

    def __post_init__(self) -> None:
        from db.sweeps import SIGNALS, SWEEP_NAME_PATTERN

        if not isinstance(self.name, str) or not SWEEP_NAME_PATTERN.match(self.name):
            _fail(str(self.name), "name must be 1-200 letters, digits or '._=+-', starting with a letter or digit")
        if not isinstance(self.question, str) or not self.question.strip():
            _fail(self.name, "question must be a sentence saying what the sweep decides")
        if not isinstance(self.base, (str, ModelConfig)):
            _fail(self.name, f"base={self.base!r} must be a preset name or a ModelConfig")
        if isinstance(self.grid, Mapping):
            object.__setattr__(self, "grid", make_grid(**self.grid))
        if not isinstance(self.grid, Grid):
            _fail(self.name, f"grid must be grid(...) or a dict of axes, not {type(self.grid).__name__}")
        if isinstance(self.seeds, bool) or not isinstance(self.seeds, int) or self.seeds < 1:
            _fail(self.name, f"seeds={self.seeds!r} must be an integer ≥ 1")
        self._check_lrs()
        if self.match is not None and self.match not in MATCHES:
            _fail(self.name, f"match={self.match!r} must be one of {', '.join(map(repr, MATCHES))} or None")
        if self.solve not in SOLVES:
            _fail(self.name, f"solve={self.solve!r} must be one of {', '.join(map(repr, SOLVES))}")
        self._check_budget()
        for name in ("train", "data", "baseline"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, Mapping):
                _fail(self.name, f"{name} must be a dict of field values, not {type(value).__name__}")
        if self.primary not in SIGNALS:
            from errors import did_you_mean

            _fail(self.name, f"primary={self.primary!r} is not a signal{did_you_mean(str(self.primary), SIGNALS)} "
                             f"Signals: {', '.join(map(repr, SIGNALS))}.")
        self._check_search()
        self._check_confirm()
        self._check_arms()
        self._check_ladder()
        if self.exclude is not None and not callable(self.exclude):
            if not isinstance(self.exclude, (list, tuple)) or not all(isinstance(e, Mapping) for e in self.exclude):
                _fail(self.name, "exclude must be a predicate (point → bool) or a list of partial dicts")

    def _check_lrs(self) -> None:
        """lrs=, when given: a list of distinct positive learning rates, stored as a tuple of floats."""
        if self.lrs is None:
            return
        lrs = tuple(self.lrs) if isinstance(self.lrs, (list, tuple)) else None
        if not lrs or any(isinstance(lr, bool) or not isinstance(lr, (int, float)) or lr <= 0 for lr in lrs):
            _fail(self.name, f"lrs={self.lrs!r} must be a non-empty list of positive learning rates")
        repeated = sorted(lr for lr, n in Counter(map(float, lrs)).items() if n > 1)
        if repeated:
            _fail(self.name,
                  f"lrs={list(self.lrs)!r} repeats {', '.join(f'{lr:g}' for lr in repeated)}; give each LR once")
        object.__setattr__(self, "lrs", tuple(float(lr) for lr in lrs))

    def _check_budget(self) -> None:
        """budget=, when given: one of steps, tokens or FLOPs, a positive amount."""
        if self.budget is None:
            return
        if not isinstance(self.budget, Mapping) or len(self.budget) != 1 or next(iter(self.budget)) not in BUDGETS:
            _fail(self.name,
                  f"budget={self.budget!r} must be one of {{'steps': N}}, {{'tokens': N}}, {{'flops': N}}")
        amount = next(iter(self.budget.values()))
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
            _fail(self.name, f"budget={dict(self.budget)!r}: the amount must be a positive number")

    def _check_search(self) -> None:
        from experiments.declare.space import SPACES

        if self.tune is None:
            return
        if not isinstance(self.tune, Mapping) or not self.tune:
            _fail(self.name, "tune must be a non-empty dict of field → LogUniform/Uniform/IntUniform/Choice")
        for field_name, space in self.tune.items():
            if not isinstance(space, SPACES):
                _fail(self.name, f"tune[{field_name!r}]={space!r} must be LogUniform, Uniform, IntUniform or Choice")
        if isinstance(self.trials, bool) or not isinstance(self.trials, int) or self.trials < 1:
            _fail(self.name, f"trials={self.trials!r} must be an integer ≥ 1")
        if self.sampler not in SAMPLERS:
            _fail(self.name, f"sampler={self.sampler!r} must be one of {', '.join(map(repr, SAMPLERS))}")
        if self.pruner not in PRUNERS:
            _fail(self.name, f"pruner={self.pruner!r} must be one of {', '.join(map(repr, PRUNERS))}")
        if "lr" in self.tune and self.lrs is not None:
            _fail(self.name, "lr is both tuned and swept (lrs=); give one")
        if self.seeds > 1 and not self.tune_per_seed:
            _fail(self.name, f"seeds={self.seeds} with tune: set tune_per_seed=True for one study per arm and seed")

    def _check_confirm(self) -> None:
        if isinstance(self.confirm_seeds, bool) or not isinstance(self.confirm_seeds, int) or self.confirm_seeds < 0:
            _fail(self.name, f"confirm_seeds={self.confirm_seeds!r} must be an integer ≥ 0")
        if self.confirm_seeds and self.tune is None:
            _fail(self.name,
                  f"confirm_seeds={self.confirm_seeds} needs tune=: it reruns a search's chosen configuration "
                             "on fresh seeds, and a grid arm has no choice to confirm (use seeds= for more seeds)")

    def _check_arms(self) -> None:
        if self.arms is None:
            return
        if not isinstance(self.arms, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in self.arms.items()):
            _fail(self.name, f"arms={self.arms!r} must map arm names to non-empty display labels, e.g. "
                             "{'base': 'SwiGLU', 'mlp=gelu': 'GELU'}")

    def _check_ladder(self) -> None:
        if self.ladder is None:
            return
        if not isinstance(self.ladder, Ladder):
            _fail(self.name,
                  f"ladder={self.ladder!r} must be ladder(...), e.g. ladder(d_model=[64, 128], tokens_per_param=20)")
        both = [axis for axis in self.ladder.axes if axis in self.built_grid.axes]
        if both:
            _fail(self.name,
                  f"{', '.join(both)} is both a ladder axis and a grid axis; the ladder sets it per rung, give it once")
        conflicts = [("budget", self.budget is not None, "the ladder's budget rule sets each rung's budget"),
                     ("lrs", self.lrs is not None and self.ladder.lrs is not None,
                      "LRs are given both here and in ladder(lrs=)"),
                     ("tune", self.tune is not None,
                      "a ladder fits each arm's best LR per rung from an LR grid, not a search"),
                     ("solve", self.match is not None and self.solve in self.ladder.axes,
                      f"match= would re-solve {self.solve}, a ladder axis, and undo the rungs")]
        for name, clash, why in conflicts:
            if clash:
                _fail(self.name, f"{name}= with ladder=: {why}")

    def excludes(self, point: Mapping[str, Any]) -> bool:
        """Whether the grid point (its switch values plus `lr`) is left out of the sweep."""
        if self.exclude is None:
            return False
        if callable(self.exclude):
            return bool(self.exclude(dict(point)))
        return any(all(name in point and point[name] == value for name, value in rule.items()) for rule in self.exclude)
