"""Grids of switch values: `grid(**axes)` is a cartesian product, `+` a union, `zip_(...)` axes that move
together. A grid is just an ordered list of points, each a partial dict of config fields."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterator, Mapping


def _values(name: str, values: Any) -> tuple:
    """An axis's values: a list/tuple (or range) as given, any other value as a one-value axis."""
    if isinstance(values, (list, tuple, range)):
        return tuple(values)
    return (values,)


def _key(point: Mapping[str, Any]) -> tuple:
    return tuple(sorted((name, repr(value)) for name, value in point.items()))


@dataclass(frozen=True)
class Grid:
    """An ordered set of points (partial config dicts); duplicates are dropped, first occurrence kept."""

    points: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        seen, unique = set(), []
        for point in self.points:
            if _key(point) not in seen:
                seen.add(_key(point))
                unique.append(dict(point))
        object.__setattr__(self, "points", tuple(unique))

    def __add__(self, other: "Grid") -> "Grid":
        """The union: this grid's points, then the other's that are new."""
        if not isinstance(other, Grid):
            return NotImplemented
        return Grid(self.points + other.points)

    def __mul__(self, other: "Grid") -> "Grid":
        """The product: every point of this grid merged with every point of the other."""
        if not isinstance(other, Grid):
            return NotImplemented
        return Grid(tuple({**a, **b} for a in self.points for b in other.points))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (dict(point) for point in self.points)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def axes(self) -> tuple[str, ...]:
        """Every field some point sets, in first-seen order."""
        return tuple(dict.fromkeys(name for point in self.points for name in point))


def grid(*together: Grid, **axes: Any) -> Grid:
    """The cartesian product of the axes (`qk_norm=["none", "rmsnorm"]`) and of any grids passed
    positionally (typically `zip_(...)`). `grid()` is the one-point grid of the base itself."""
    result = Grid(({},))
    for part in together:
        if not isinstance(part, Grid):
            raise TypeError(f"grid() takes grids positionally (e.g. zip_(...)), got {part!r}")
        result = result * part
    names = list(axes)
    product = itertools.product(*(_values(name, axes[name]) for name in names))
    return result * Grid(tuple(dict(zip(names, combo)) for combo in product))


def zip_(**axes: Any) -> Grid:
    """Axes that move together: `zip_(n_layers=[2, 4, 8], d_model=[256, 128, 64])` is three points."""
    columns = {name: _values(name, values) for name, values in axes.items()}
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        sizes = ", ".join(f"{name}: {len(values)}" for name, values in columns.items())
        raise ValueError(f"zip_() axes must have the same number of values; got {sizes}")
    return Grid(tuple(dict(zip(columns, combo)) for combo in zip(*columns.values())))
