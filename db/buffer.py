"""In-memory buffers that turn log calls into Arrow tables at flush time.

A log call must cost a few microseconds (it runs every training step), so each buffer stores what the
call gave with as little work as possible (list appends, one small numpy copy) and leaves the expansion
to one row per value to numpy at flush time, once per thousands of steps.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from db.schema import DATA_SCHEMAS


def _constant(value: object, kind: pa.DataType, n: int) -> pa.Array:
    """`value` n times; via a one-entry dictionary because `pa.repeat` of a string costs µs per row."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([value], kind)).cast(kind)


class ScalarBuffer:
    """`metrics` rows: per call one step and parallel lists of names and values."""

    schema = DATA_SCHEMAS["metrics"]

    def __init__(self, run_id: str, segment: int):
        self.run_id, self.segment = run_id, segment
        self.steps: list[int] = []
        self.counts: list[int] = []
        self.names: list[str] = []
        self.values: list[float] = []

    def __len__(self) -> int:
        return len(self.values)

    def add(self, step: int, names: list[str], values: list[float]) -> None:
        self.steps.append(step)
        self.counts.append(len(names))
        self.names.extend(names)
        self.values.extend(values)

    def take_table(self) -> pa.Table:
        """The buffered rows as a table, leaving the buffer empty."""
        n = len(self)
        table = pa.Table.from_arrays(
            [
                _constant(self.run_id, pa.string(), n),
                _constant(self.segment, pa.int32(), n),
                pa.array(np.repeat(np.asarray(self.steps, np.int64), self.counts)),
                pa.array(self.names, pa.string()),
                pa.array(np.asarray(self.values, np.float64)),
            ],
            schema=self.schema,
        )
        self.steps, self.counts, self.names, self.values = [], [], [], []
        return table


class _ShapeGroup:
    """The calls of one array shape: values packed into one growing float64 arena, plus step and name per call."""

    def __init__(self, shape: tuple[int, ...]):
        self.shape = shape
        self.per_call = int(np.prod(shape))
        self.arena = np.empty((256, *shape), np.float64)  # (capacity, L) or (capacity, L, H)
        self.steps: list[int] = []
        self.name_ids: list[int] = []

    def add(self, step: int, name_id: int, values: np.ndarray) -> None:
        calls = len(self.steps)
        if calls == len(self.arena):
            self.arena = np.concatenate([self.arena, np.empty_like(self.arena)])  # doubling: amortized O(1)
        self.arena[calls] = values  # the copy that leaves the caller free to reuse its array
        self.steps.append(step)
        self.name_ids.append(name_id)

    def columns(self) -> dict[str, np.ndarray]:
        """step, layer, head (-1: layer-wide), name id and value columns of every call, in call order."""
        calls = len(self.steps)
        if len(self.shape) == 1:
            layer, head = np.arange(self.shape[0], dtype=np.int32), np.full(self.shape[0], -1, np.int32)
        else:
            layers, heads = np.indices(self.shape, dtype=np.int32)  # (L, H) each
            layer, head = layers.ravel(), heads.ravel()
        return {
            "step": np.repeat(np.asarray(self.steps, np.int64), self.per_call),
            "layer": np.tile(layer, calls),
            "head": np.tile(head, calls),
            "name": np.repeat(np.asarray(self.name_ids, np.int32), self.per_call),
            "value": self.arena[:calls].reshape(-1),
        }


class LayerBuffer:
    """`layer_metrics` rows: per call one step, one name and a (layers,) or (layers, heads) array.

    Calls are grouped by array shape (usually one shape per run), so a flush is a few numpy operations
    per shape, not per call; rows come out grouped by shape, which SQL never sees.
    """

    schema = DATA_SCHEMAS["layer_metrics"]

    def __init__(self, run_id: str, segment: int):
        self.run_id, self.segment = run_id, segment
        self.name_ids: dict[str, int] = {}
        self.groups: dict[tuple[int, ...], _ShapeGroup] = {}
        self.rows = 0

    def __len__(self) -> int:
        return self.rows

    def add(self, step: int, name: str, values: np.ndarray) -> None:
        group = self.groups.get(values.shape)
        if group is None:
            group = self.groups[values.shape] = _ShapeGroup(values.shape)
        name_id = self.name_ids.setdefault(name, len(self.name_ids))
        group.add(step, name_id, values)
        self.rows += group.per_call

    def take_table(self) -> pa.Table:
        """The buffered rows as a table, leaving the buffer empty."""
        parts = [group.columns() for group in self.groups.values()]
        merged = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
        n = self.rows
        table = pa.Table.from_arrays(
            [
                _constant(self.run_id, pa.string(), n),
                _constant(self.segment, pa.int32(), n),
                pa.array(merged["step"]),
                pa.array(merged["layer"]),
                pa.array(merged["head"], mask=merged["head"] < 0),
                pa.DictionaryArray.from_arrays(pa.array(merged["name"]),
                                               pa.array(list(self.name_ids), pa.string())).cast(pa.string()),
                pa.array(merged["value"]),
            ],
            schema=self.schema,
        )
        self.name_ids, self.groups, self.rows = {}, {}, 0
        return table


class EventBuffer:
    """`events` rows: rare, so kept row by row."""

    schema = DATA_SCHEMAS["events"]

    def __init__(self, run_id: str, segment: int):
        self.run_id, self.segment = run_id, segment
        self.rows: list[tuple] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, step: int, kind: str, value: float | None, detail: str | None, logged_at) -> None:
        self.rows.append((step, kind, value, detail, logged_at))

    def take_table(self) -> pa.Table:
        """The buffered rows as a table, leaving the buffer empty."""
        n = len(self.rows)
        columns = list(zip(*self.rows))
        table = pa.Table.from_arrays(
            [_constant(self.run_id, pa.string(), n), _constant(self.segment, pa.int32(), n)]
            + [pa.array(column, type=field.type) for column, field in zip(columns, list(self.schema)[2:])],
            schema=self.schema,
        )
        self.rows = []
        return table
