"""`ladder(...)`: an ablation's scale axis as data. Rungs of growing models, each an ordinary scale of cells with
its own budget (fixed tokens, tokens per parameter, or FLOPs), seeds and LR grid:

    ladder(d_model=[64, 128, 256], n_layers=[2, 4, 6], tokens_per_param=20)

The axes move together (rung i takes the i-th value of each), like `zip_`. A rung is known in the store by its
`d_model` and `n_layers` (analysis.ladder reads them back from the runs), so a ladder climbs at least one of
them. Torch-free; rungs are resolved against the base model by `experiments.plan.rungs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, NoReturn, Sequence

from errors import ConfigError, closest
from harness.config.model import ModelConfig

BUDGET_RULES = ("tokens", "tokens_per_param", "flops")
RUNG_FIELDS = ("d_model", "n_layers")  # what identifies a rung among a sweep's runs
SIZE_TRAIN_FIELDS = ("batch_size", "seq_len", "grad_accum")  # training fields that may grow with the model


def _fail(message: str) -> NoReturn:
    raise ConfigError(f"ladder(...): {message}")


def _number(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0 and value == value
            and value != float("inf"))


def _per_rung(name: str, value: Any, rungs: int, check, what: str) -> tuple:
    """`value` given once for every rung, or as a list with one entry per rung; each entry passes `check`."""
    values = tuple(value) if isinstance(value, (list, tuple)) else (value,) * rungs
    if len(values) != rungs:
        _fail(f"{name}={value!r} has {len(values)} entries for {rungs} rungs; give one value, or one per rung")
    if not all(check(v) for v in values):
        _fail(f"{name}={value!r}: each entry must be {what}")
    return values


def _axes(axes: Mapping[str, Any]) -> dict[str, tuple]:
    """The rung axes, checked: size fields, at least two rungs, the same count each, climbing d_model or n_layers."""
    allowed = (*ModelConfig.field_names(), *SIZE_TRAIN_FIELDS)
    for name in axes:
        if name not in allowed:
            hint = closest(name, allowed)
            _fail(f"{name!r} cannot be a rung axis: a ladder climbs ModelConfig fields (and "
                  f"{', '.join(SIZE_TRAIN_FIELDS)})"
                  + (f"; did you mean {hint!r}?" if hint else "") + " LRs per rung go in lrs=, budgets in tokens=, "
                  "tokens_per_param= or flops=.")
    if not axes or not all(isinstance(values, (list, tuple, range)) for values in axes.values()):
        _fail("give the rungs as lists of values, e.g. ladder(d_model=[64, 128, 256], n_layers=[2, 4, 6], "
              "tokens_per_param=20)")
    columns = {name: tuple(values) for name, values in axes.items()}
    if len({len(values) for values in columns.values()}) > 1:
        _fail("every axis needs one value per rung; got " + ", ".join(f"{n}: {len(v)}" for n, v in columns.items()))
    if len(next(iter(columns.values()))) < 2:
        _fail("a ladder needs at least two rungs")
    if not any(name in columns for name in RUNG_FIELDS):
        _fail(f"a ladder climbs {' or '.join(RUNG_FIELDS)} (the store knows a rung by them); axes given: "
              f"{', '.join(columns)}")
    rungs = list(zip(*(columns.get(name, (None,) * len(next(iter(columns.values())))) for name in RUNG_FIELDS)))
    if len(set(rungs)) < len(rungs):
        _fail(f"two rungs have the same {' and '.join(RUNG_FIELDS)}; each rung must differ in one of them")
    return columns


@dataclass(frozen=True)
class Ladder:
    """Rungs: `axes` (field → one value per rung), the budget rule (`budget`: its kind, one amount per rung),
    and per rung the seeds and LRs (None: the ablation's)."""

    axes: Mapping[str, tuple]
    budget: tuple[str, tuple[float, ...]]
    seeds: tuple[int, ...] | None = None
    lrs: tuple[tuple[float, ...], ...] | None = None

    @property
    def n_rungs(self) -> int:
        """How many rungs the ladder has."""
        return len(next(iter(self.axes.values())))

    def values(self, rung: int) -> dict[str, Any]:
        """Rung `rung`'s field → value."""
        return {name: values[rung] for name, values in self.axes.items()}

    def label(self, rung: int) -> str:
        """How names and tables show the rung: `d_model=128,n_layers=4` (every axis, in the order given)."""
        from experiments.plan.naming import format_value

        return ",".join(f"{name}={format_value(value)}" for name, value in self.values(rung).items())


def _lrs(lrs: Any, rungs: int) -> tuple[tuple[float, ...], ...] | None:
    """LRs for every rung (one list) or per rung (a list of lists), each list non-empty and positive."""
    if lrs is None:
        return None
    per_rung = isinstance(lrs, (list, tuple)) and lrs and all(isinstance(entry, (list, tuple)) for entry in lrs)
    grids = (tuple(tuple(entry) for entry in lrs) if per_rung
             else (tuple(lrs) if isinstance(lrs, (list, tuple)) else (),) * rungs)
    if len(grids) != rungs or not all(grid and all(_number(lr) for lr in grid) for grid in grids):
        _fail(f"lrs={lrs!r} must be a list of positive LRs for every rung, or one such list per rung ({rungs} rungs)")
    return tuple(tuple(float(lr) for lr in grid) for grid in grids)


def ladder(*, tokens: Any = None, tokens_per_param: Any = None, flops: Any = None, seeds: Any = None,
           lrs: Sequence[Any] | None = None, **axes: Any) -> Ladder:
    """Rungs from zipped axes (`d_model=[64, 128, 256], n_layers=[2, 4, 6]`) and one budget rule: `tokens=N`
    (every rung the same data), `tokens_per_param=k` (k × the rung's base parameters, Chinchilla's ≈ 20), or
    `flops=F`; each may be one value or one per rung. `seeds`, `lrs`: per rung overrides of the ablation's (one
    value for all rungs or one per rung; `lrs` a list, or a list of lists)."""
    columns = _axes(axes)
    rungs = len(next(iter(columns.values())))
    given = {name: value
             for name, value in (("tokens", tokens), ("tokens_per_param", tokens_per_param), ("flops", flops))
             if value is not None}
    if len(given) != 1:
        _fail(f"give exactly one budget rule of {', '.join(f'{rule}=' for rule in BUDGET_RULES)} (got "
              f"{', '.join(given) or 'none'}); e.g. tokens_per_param=20")
    (kind, amount), = given.items()
    amounts = _per_rung(kind, amount, rungs, _number, "a positive number")
    seeds = None if seeds is None else _per_rung(
        "seeds", seeds, rungs, lambda s: isinstance(s, int) and not isinstance(s, bool) and s >= 1, "an integer ≥ 1")
    return Ladder(columns, (kind, tuple(float(a) for a in amounts)), seeds, _lrs(lrs, rungs))
