"""Every path that writes a comparison row writes the keys and value types `ComparisonRow` declares: the fixed-n
table, the anytime-valid columns, a search's selection and the headline's own (mypy checks the code that reads
them; this checks what the code puts there at run time)."""

import types
import typing

import pytest

from analysis.comparison.headline import headlines
from analysis.comparison.row import ComparisonRow
from analysis.comparison.sequential_table import SEQUENTIAL_COLUMNS, add_sequential
from analysis.comparison.table import COLUMNS, DIRECTION, OBSERVED, comparison_table
from analysis.reading.cells import SELECTION, Cells, add_selection
from analysis.reading.finished import finished_cells
from analysis.reading.frames import load_sweep

HINTS = typing.get_type_hints(ComparisonRow)


def _allowed(hint) -> tuple[type, ...]:
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return tuple(t for arg in typing.get_args(hint) for t in _allowed(arg))
    if typing.get_origin(hint) is typing.Literal:
        return tuple({type(value) for value in typing.get_args(hint)})
    return (type(None),) if hint is None else (hint,)


def assert_conforms(row) -> None:
    assert ComparisonRow.__required_keys__ <= row.keys() <= HINTS.keys(), sorted(row.keys() ^ HINTS.keys())
    wrong = {key: (value, HINTS[key]) for key, value in row.items() if not isinstance(value, _allowed(HINTS[key]))}
    assert not wrong


def test_every_printed_column_is_a_declared_key():
    printed = {*COLUMNS, *SEQUENTIAL_COLUMNS, SELECTION, OBSERVED, DIRECTION}
    assert printed <= HINTS.keys()
    assert HINTS.keys() - printed == {"test", "bimodal"}  # the headline's own, never a table column


@pytest.fixture(scope="module")
def cells(planted_store) -> Cells:
    return finished_cells(load_sweep(planted_store[0], "planted"))


def test_the_fixed_n_and_anytime_valid_rows_conform(cells):
    rows = comparison_table(cells)
    assert len(rows) > 3 and {row["verdict"] for row in rows} > {"baseline"}
    for row in rows:
        assert_conforms(row)
    add_sequential(rows, cells)
    for row in rows:
        assert set(SEQUENTIAL_COLUMNS) <= row.keys()
        assert_conforms(row)


def test_a_searched_arms_selection_conforms():
    runs = tuple((arm, None, seed, arm == "searched", "completed", 3.0 + 0.01 * seed + (arm == "searched") * 0.1)
                 for arm in ("baseline", "searched") for seed in range(4))
    cells = Cells("baseline", runs, confirmed=())
    rows = comparison_table(cells)
    assert add_selection(rows, cells) == [SELECTION]
    assert [row["selection"] for row in rows] == [None, "best trial per seed"]
    for row in rows:
        assert_conforms(row)


@pytest.mark.parametrize("anytime", [False, True])
def test_headline_rows_conform(cells, anytime):
    best = {arm: lr for arm, lr, *_ in cells.runs}
    lines = headlines(cells, best, 0.01, anytime)
    assert lines and all(line.row["test"] == ("anytime" if anytime else "fixed") for line in lines)
    for line in lines:
        assert_conforms(line.row)
