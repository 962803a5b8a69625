"""Search spaces of `Ablation(tune=...)`: what Optuna samples for a field, per arm."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from errors import ConfigError


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{name}={value!r} must be a finite number")
    return value


@dataclass(frozen=True)
class Uniform:
    """A float uniform in [low, high]."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not _number("low", self.low) < _number("high", self.high):
            raise ConfigError(f"{type(self).__name__}({self.low!r}, {self.high!r}): low must be below high")

    def distribution(self):
        import optuna

        return optuna.distributions.FloatDistribution(float(self.low), float(self.high))

    @property
    def bounds(self) -> tuple:
        """The extreme values (each is validated as a config before the search starts)."""
        return (self.low, self.high)


@dataclass(frozen=True)
class LogUniform(Uniform):
    """A float log-uniform in [low, high] (learning rates, epsilons); low > 0."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.low <= 0:
            raise ConfigError(f"LogUniform({self.low!r}, {self.high!r}): low must be > 0")

    def distribution(self):
        import optuna

        return optuna.distributions.FloatDistribution(float(self.low), float(self.high), log=True)


@dataclass(frozen=True)
class IntUniform(Uniform):
    """An integer uniform in [low, high] (warmup steps, widths)."""

    low: int
    high: int

    def __post_init__(self) -> None:
        super().__post_init__()
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (self.low, self.high)):
            raise ConfigError(f"IntUniform({self.low!r}, {self.high!r}): bounds must be integers")

    def distribution(self):
        import optuna

        return optuna.distributions.IntDistribution(self.low, self.high)


@dataclass(frozen=True)
class Choice:
    """One of a list of values."""

    values: Sequence[Any]

    def __post_init__(self) -> None:
        if not isinstance(self.values, (list, tuple)) or not self.values:
            raise ConfigError(f"Choice({self.values!r}): give a non-empty list of values")
        object.__setattr__(self, "values", tuple(self.values))

    def distribution(self):
        import optuna

        return optuna.distributions.CategoricalDistribution(self.values)

    @property
    def bounds(self) -> tuple:
        return tuple(self.values)  # a tuple already (__post_init__); says so to the checker


SPACES = (Uniform, LogUniform, IntUniform, Choice)
