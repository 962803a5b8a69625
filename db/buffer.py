"""Columnar in-memory buffers: logging appends to Python lists; a flush turns them into one Arrow table."""

from __future__ import annotations

import pyarrow as pa


class ColumnBuffer:
    """Rows of one table kept as one list per column, so a log call is a few `list.extend`s."""

    def __init__(self, schema: pa.Schema, constants: dict[str, object]):
        self.schema = schema
        self.constants = constants  # columns equal in every row of a writer (run_id, segment)
        self.columns: dict[str, list] = {f.name: [] for f in schema if f.name not in constants}

    def __len__(self) -> int:
        return len(next(iter(self.columns.values())))

    def take_table(self) -> pa.Table:
        """The buffered rows as a table (constants filled in), leaving the buffer empty."""
        n = len(self)
        arrays = []
        for field in self.schema:
            if field.name in self.constants:
                arrays.append(pa.repeat(pa.scalar(self.constants[field.name], field.type), n))
            else:
                arrays.append(pa.array(self.columns[field.name], type=field.type))
                self.columns[field.name] = []
        return pa.Table.from_arrays(arrays, schema=self.schema)
