"""Grids of switch values: `grid(**axes)` is a cartesian product, `+` a union, `zip_(...)` axes that move
together. A grid is just an ordered list of points, each a partial dict of config fields.

An axis given as a dict, `grid(mlp={"GELU": "gelu", "SwiGLU": "swiglu"})`, labels its values: the labels
are what tables and legends show for the arms (`arm_label`); the arms' names, their identity, do not change."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterator, Mapping


def _values(name: str, values: Any) -> tuple:
    """An axis's values: a list/tuple (or range) as given, a dict's values (its keys are their labels), any
    other value as a one-value axis."""
    if isinstance(values, Mapping):
        return tuple(values.values())
    if isinstance(values, (list, tuple, range)):
        return tuple(values)
    return (values,)


def _labels(name: str, values: Any) -> tuple:
    """Each value's label: a dict axis's keys (checked to be non-empty text), else None."""
    if not isinstance(values, Mapping):
        return (None,) * len(_values(name, values))
    for label in values:
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"grid({name}={{...}}): a label must be non-empty text, got {label!r}")
    return tuple(values)


def _key(point: Mapping[str, Any]) -> tuple:
    return tuple(sorted((name, repr(value)) for name, value in point.items()))


@dataclass(frozen=True)
class Grid:
    """An ordered set of points (partial config dicts); duplicates are dropped, first occurrence kept.
    `labels`, parallel to `points`: per point, field → the label its value was given (labelled fields only)."""

    points: tuple[dict[str, Any], ...] = ()
    labels: tuple[dict[str, str], ...] | None = None

    def __post_init__(self) -> None:
        labels = self.labels if self.labels is not None else ({},) * len(self.points)
        seen, unique, kept = set(), [], []
        for point, label in zip(self.points, labels):
            if _key(point) not in seen:
                seen.add(_key(point))
                unique.append(dict(point))
                kept.append(dict(label))
        object.__setattr__(self, "points", tuple(unique))
        object.__setattr__(self, "labels", tuple(kept))

    def __add__(self, other: "Grid") -> "Grid":
        """The union: this grid's points, then the other's that are new."""
        if not isinstance(other, Grid):
            return NotImplemented
        return Grid(self.points + other.points, self._labels() + other._labels())

    def __mul__(self, other: "Grid") -> "Grid":
        """The product: every point of this grid merged with every point of the other."""
        if not isinstance(other, Grid):
            return NotImplemented
        pairs = [(a, b) for a in zip(self.points, self._labels()) for b in zip(other.points, other._labels())]
        return Grid(tuple({**a, **b} for (a, _), (b, _) in pairs),
                    tuple({**{k: v for k, v in la.items() if k not in b}, **lb} for (_, la), (b, lb) in pairs))

    def labelled(self) -> Iterator[tuple[dict[str, Any], dict[str, str]]]:
        """Each point with its labels (field → label, for the fields whose value was given one)."""
        return ((dict(point), dict(label)) for point, label in zip(self.points, self._labels()))

    def _labels(self) -> tuple[dict[str, str], ...]:
        return self.labels or ()  # never None once built: __post_init__ stores a row per point

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (dict(point) for point in self.points)

    def __len__(self) -> int:
        return len(self.points)

    @property
    def axes(self) -> tuple[str, ...]:
        """Every field some point sets, in first-seen order."""
        return tuple(dict.fromkeys(name for point in self.points for name in point))


def grid(*together: Grid, **axes: Any) -> Grid:
    """The cartesian product of the axes (`qk_norm=["none", "rmsnorm"]`, or with labels
    `mlp={"GELU": "gelu", "SwiGLU": "swiglu"}`) and of any grids passed positionally (typically `zip_(...)`).
    `grid()` is the one-point grid of the base itself."""
    result = Grid(({},))
    for part in together:
        if not isinstance(part, Grid):
            raise TypeError(f"grid() takes grids positionally (e.g. zip_(...)), got {part!r}")
        result = result * part
    names = list(axes)
    values = itertools.product(*(_values(name, axes[name]) for name in names))
    labels = itertools.product(*(_labels(name, axes[name]) for name in names))
    return result * Grid(tuple(dict(zip(names, combo)) for combo in values),
                         tuple({n: label for n, label in zip(names, combo) if label is not None} for combo in labels))


def zip_(**axes: Any) -> Grid:
    """Axes that move together: `zip_(n_layers=[2, 4, 8], d_model=[256, 128, 64])` is three points."""
    columns = {name: _values(name, values) for name, values in axes.items()}
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        sizes = ", ".join(f"{name}: {len(values)}" for name, values in columns.items())
        raise ValueError(f"zip_() axes must have the same number of values; got {sizes}")
    labels = {name: _labels(name, values) for name, values in axes.items()}
    return Grid(tuple(dict(zip(columns, combo)) for combo in zip(*columns.values())),
                tuple({n: label for n, label in zip(labels, combo) if label is not None}
                      for combo in zip(*labels.values())))
