"""Which code made a run (docs/db.md, "Provenance"): the manifest columns every training segment records, how a
code version reads, which stored results other code made, and the one-line summary compare and the report show.
Torch-free; the values are collected by `harness.provenance` when a run starts.

A segment's *code* is (harness version, git commit, dirty flag). Torch, Lightning, Python, the device and the
precision are recorded beside it and shown, but the code alone decides whether a result was made by other code.
A segment with no provenance (written before it was recorded, by a user's `db.RunWriter`, or a worker's record of
a failure before its run opened) is *unrecorded*: it is left out wherever a recorded one exists.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from db.errors import DbError
from db.paths import run_dir, segment_shard_name
from db.run_state import RunState, run_state

CODE_COLUMNS = ("harness_version", "git_commit", "git_dirty")
PROVENANCE_COLUMNS = (*CODE_COLUMNS, "torch_version", "lightning_version", "python_version", "device_name",
                      "trainer_precision")
SHORT_COMMIT = 7  # as `git log --oneline` abbreviates
CODE_SUMMARY_COLUMNS = (*CODE_COLUMNS, "code_versions", "torch_version", "device_name")  # what code_summary reads


def provenance_row(provenance: Mapping[str, Any] | None) -> dict[str, Any]:
    """Every provenance column's value for one manifest row (None where not given); DbError for a key that names
    no column or a value of the wrong type (git_dirty a bool, the rest text)."""
    given = dict(provenance or {})
    unknown = sorted(set(given) - set(PROVENANCE_COLUMNS))
    if unknown:
        raise DbError(f"provenance names no column {unknown[0]!r}; columns: {', '.join(PROVENANCE_COLUMNS)}.")
    for name, value in given.items():
        kind = bool if name == "git_dirty" else str
        if value is not None and not isinstance(value, kind):
            raise DbError(f"provenance {name}={value!r} is invalid: expected {kind.__name__} or None.")
    return {name: given.get(name) for name in PROVENANCE_COLUMNS}


def _given(value: Any) -> Any:
    """None for a missing value however it arrives (None, NaN or pandas' NA from a frame)."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType":
        return None
    return value


@dataclass(frozen=True)
class Code:
    """The code that wrote a segment: harness version, git commit and dirty flag (None: not recorded, or for the
    commit and flag, not a git checkout)."""

    harness_version: str | None = None
    git_commit: str | None = None
    git_dirty: bool | None = None

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> "Code":
        """The code of a row holding the code columns (a manifest row, a `runs` row)."""
        dirty = _given(row.get("git_dirty"))
        return cls(_given(row.get("harness_version")), _given(row.get("git_commit")),
                   None if dirty is None else bool(dirty))

    @property
    def recorded(self) -> bool:
        return self.harness_version is not None

    def describe(self) -> str:
        """'harness 0.1.0 @ 6eaecc0 (clean)', 'harness 0.1.0 (not a git checkout)' or 'unrecorded code'."""
        if not self.recorded:
            return "unrecorded code"
        if self.git_commit is None:
            return f"harness {self.harness_version} (not a git checkout)"
        state = "" if self.git_dirty is None else " (dirty)" if self.git_dirty else " (clean)"
        return f"harness {self.harness_version} @ {self.git_commit[:SHORT_COMMIT]}{state}"


UNRECORDED = Code()


def _manifest_code(path: str) -> Code:
    """The code columns of one manifest shard (an older shard has none: unrecorded)."""
    import pyarrow.parquet as pq

    try:
        shard = pq.ParquetFile(path)
        columns = [c for c in CODE_COLUMNS if c in shard.schema_arrow.names]
        table = shard.read(columns=columns) if columns else None  # not pq.read_table: that imports pandas (~0.4 s)
    except (OSError, ValueError):
        return UNRECORDED
    return Code.of(table.slice(0, 1).to_pylist()[0]) if table is not None and table.num_rows else UNRECORDED


def run_codes(results_dir: str | os.PathLike, run_id: str, state: RunState | None = None) -> tuple[Code, ...]:
    """The distinct codes of the run's counting segments in segment order, unrecorded ones left out unless no
    segment recorded one (then `(UNRECORDED,)`); () for a run with no segment."""
    state = state or run_state(results_dir, run_id)
    folder = run_dir(Path(results_dir), run_id) / "manifest"
    codes = [_manifest_code(str(folder / segment_shard_name(s))) for s in state.segments]
    recorded = [code for code in codes if code.recorded]
    return tuple(dict.fromkeys(recorded or codes))


def other_code_results(results_dir: str | os.PathLike, run_ids: Iterable[str],
                       current: Code) -> dict[str, tuple[Code, ...]]:
    """The runs among `run_ids` whose result other code made, wholly or in part (a counting segment under another
    code, or none recorded), each with its codes; runs without a result are not judged."""
    changed = {}
    for run_id in dict.fromkeys(run_ids):
        state = run_state(results_dir, run_id)
        if state.result is None:
            continue
        codes = run_codes(results_dir, run_id, state)
        if codes != (current,):
            changed[run_id] = codes
    return changed


SEVERAL = "several (resumed under other code)"


def _most_common(values: Iterable[str]) -> list[tuple[str, int]]:
    """(value, count), most common first, ties in alphabetical order (rows come in no set order)."""
    return sorted(Counter(values).items(), key=lambda item: (-item[1], item[0]))


def _counted(labels: Iterable[str]) -> str:
    """'24 by harness 0.1.0 @ 6eaecc0 (clean), 12 by unrecorded code', most common first."""
    return ", ".join(f"{n} by {label}" for label, n in _most_common(labels))


def codes_count(changed: Mapping[str, tuple[Code, ...]]) -> str:
    """How many of these runs each code made ('8 by harness 0.1.0 @ 6eaecc0 (clean), 4 by unrecorded code')."""
    return _counted(codes[0].describe() if len(codes) == 1 else SEVERAL for codes in changed.values())


def _values(rows: list[Mapping[str, Any]], column: str) -> str:
    """The distinct values of a column among the rows, most common first ('2.13.0' or '2.13.0 / 2.12.1')."""
    present = (str(_given(row.get(column))) for row in rows if _given(row.get(column)) is not None)
    return " / ".join(value for value, _ in _most_common(present))


def code_summary(rows: Iterable[Mapping[str, Any]]) -> str | None:
    """One line on the code that made these runs (rows of the `runs` view, e.g. a comparison's finished runs):
    'code: harness 0.1.0 @ 6eaecc0 (clean), torch 2.13.0, cpu' when they agree; when they mix code versions, which
    and how many runs each ('code: the 36 runs mix code versions: 24 by harness … (clean), 12 by harness …
    (dirty); torch 2.13.0, cpu'); None when no run recorded its code (a store from before provenance: nothing to
    say). A run resumed under other code counts as 'several'."""
    rows = list(rows)
    if not any(Code.of(row).recorded for row in rows):
        return None
    labels = [SEVERAL if (_given(row.get("code_versions")) or 0) > 1 else Code.of(row).describe() for row in rows]
    torch, device = _values(rows, "torch_version"), _values(rows, "device_name")
    machine = ", ".join([*([f"torch {torch}"] if torch else []), *([device] if device else [])])
    if len(set(labels)) == 1:
        return f"code: {labels[0]}" + (f", {machine}" if machine else "")
    return f"code: the {len(rows)} runs mix code versions: {_counted(labels)}" + (f"; {machine}" if machine else "")


def finished_code_summary(con, relation: str) -> str | None:
    """`code_summary` of the finished runs (completed or diverged: what a comparison is made of) of `relation`, a
    table or view with the `runs` view's columns (say, analysis' `sweep_runs`), read through DuckDB connection `con`."""
    from db.sql import quote_ident

    result = con.execute(f"SELECT {', '.join(CODE_SUMMARY_COLUMNS)} FROM {quote_ident(relation)} "
                         "WHERE status IN ('completed', 'diverged')")
    return code_summary(dict(zip(CODE_SUMMARY_COLUMNS, row)) for row in result.fetchall())
