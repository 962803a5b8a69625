"""`Study`: one arm's Optuna search (per seed, if asked). Its base configs are the arm's resolved cell; each
trial applies the sampled values on top and becomes an ordinary run whose key is its configs' hash. With
`confirm_seeds` N, the finished search's chosen configuration is rerun as N confirmation cells on fresh seeds,
so the comparison tests it on runs it was not selected on."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from errors import ConfigError
from experiments.declare.space import Choice, IntUniform, LogUniform, Uniform
from experiments.plan.cell import Cell
from harness.config.run_configs import RunConfigs

_RANGES = {cls.__name__: cls for cls in (Uniform, LogUniform, IntUniform)}  # a Choice has values instead
# Confirmation i of a study whose trials train with seed s trains with seed s + (i + 1) · CONFIRM_SEED_STRIDE:
# never a seed of any trial (those are below the stride for any sweep of fewer than a million seeds), distinct
# across the per-seed studies of an arm, and the same for every arm, so the arms' confirmations pair seed by seed.
CONFIRM_SEED_STRIDE = 1_000_000


def space_to_json(space) -> dict[str, Any]:
    if isinstance(space, Choice):
        return {"kind": "Choice", "values": list(space.values)}
    return {"kind": type(space).__name__, "low": space.low, "high": space.high}


def space_from_json(record: Mapping[str, Any]):
    if record["kind"] == "Choice":
        return Choice(record["values"])
    return _RANGES[record["kind"]](record["low"], record["high"])


@dataclass(frozen=True)
class Study:
    """The search of one arm: base cell, the space, and how to sample."""

    index: int
    base: Cell
    space: dict[str, Any]
    trials: int
    sampler: str
    pruner: str
    confirm_seeds: int = 0

    def name(self, sweep: str) -> str:
        """The Optuna study name: unique per sweep, arm, LR and seed."""
        return f"{sweep}:{self.base.arm}:lr={self.base.lr:g}:seed={self.base.seed}"

    def configs(self, params: Mapping[str, Any]) -> RunConfigs:
        """The base configs with the sampled values applied (and validated)."""
        return RunConfigs(self.base.model, self.base.train, self.base.data).apply(params, "tune=")

    def cell(self, params: Mapping[str, Any], index: int, *, trial: int | None = None, seed: int | None = None,
             confirms: int | None = None) -> Cell:
        """The cell that trains `params` on the base configs (at `seed`, default the study's): a trial, or
        with `confirms` a confirmation cell. Its run id is its configs' key, so identical configs are one run."""
        from harness.train.keys import run_key

        model, train, data = self.configs(params)
        if seed is not None:
            train = train.replace(seed=seed)
        return replace(self.base, index=index, model=model, train=train, data=data, lr=train.lr, seed=train.seed,
                       run_id=run_key(model, train, data), trial=trial, confirms=confirms,
                       arm_values={**self.base.arm_values, **params})

    def confirmation_seed(self, i: int) -> int:
        """The fresh seed of confirmation `i` (see CONFIRM_SEED_STRIDE)."""
        return self.base.seed + (i + 1) * CONFIRM_SEED_STRIDE

    def confirmations(self, trial: int, params: Mapping[str, Any]) -> list[Cell]:
        """The confirmation cells of the chosen trial: its configuration on each of the fresh seeds."""
        return [self.cell(params, i, seed=self.confirmation_seed(i), confirms=trial) for i in range(self.confirm_seeds)]

    def check_bounds(self) -> None:
        """Build the configs at every bound of every tuned field, so a bad range fails before the search."""
        for field, space in self.space.items():
            for value in space.bounds:
                try:
                    self.configs({field: value}).check()
                except ConfigError as err:
                    raise ConfigError(f"tune[{field!r}] reaches {value!r}: {err}") from None

    def record(self) -> dict[str, Any]:
        """The study as stored in sweep.json (so any worker can run its trials)."""
        return {"index": self.index, "cell": self.base.plan_row(),
                "space": {k: space_to_json(v) for k, v in self.space.items()}, "trials": self.trials,
                "sampler": self.sampler, "pruner": self.pruner, "confirm_seeds": self.confirm_seeds}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> "Study":
        return cls(record["index"], Cell.from_plan_row(record["cell"]),
                   {k: space_from_json(v) for k, v in record["space"].items()},
                   record["trials"], record["sampler"], record["pruner"], record.get("confirm_seeds", 0))
