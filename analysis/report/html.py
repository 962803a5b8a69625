"""HTML pieces of the report: escaped text, formatted numbers, the sortable table, the SQL folds."""

from __future__ import annotations

import math
import re
from html import escape
from urllib.parse import quote

import numpy as np
import pandas as pd


def missing(value) -> bool:
    """None, NaN or pandas' NA."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def number(value) -> str:
    """A readable number: empty when missing, ints with separators, floats to 4 significant digits."""
    if missing(value):
        return ""
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return f"{float(value):.4g}"


def sort_key(value) -> str:
    """The `data-sort` attribute of a cell: numbers sort numerically, missing values last."""
    if missing(value):
        return ""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        return repr(float(value))
    return escape(str(value))


def _shown(value) -> str:
    return number(value) if isinstance(value, (int, float, np.number)) and not isinstance(value, bool) else str(value)


def run_link(run_id: str, text: str | None = None) -> str:
    """A link that opens run `run_id` in the page's one-run view (`#run=<id>`)."""
    return (f'<a class="run-link" href="#run={quote(run_id, safe="")}" data-run="{escape(run_id)}">'
            f"{escape(text or run_id)}</a>")


def table(frame: pd.DataFrame, labelled: tuple[str, ...] = (), markup: tuple[str, ...] = ()) -> str:
    """`frame` as an HTML table whose columns sort on a header click (the page's script does it); cells of the
    `labelled` columns also carry their value as `data-<column>`, for the style sheet; those of the `markup` columns
    are HTML already (run links), sorted by their text."""
    head = "".join(f"<th>{escape(str(column))}</th>" for column in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record):
            shown = "" if missing(value) else _shown(value)
            label = f' data-{column}="{escape(str(value))}"' if column in labelled else ""
            if column in markup:
                cells.append(f'<td data-sort="{escape(_text(shown))}">{shown}</td>')
                continue
            cells.append(f'<td data-sort="{sort_key(value)}"{label}>{escape(shown)}</td>')
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _text(markup: str) -> str:
    """The text of a cell's HTML (what it sorts by)."""
    return re.sub(r"<[^>]*>", "", markup)


def sql_block(queries: list[str]) -> str:
    """The SQL behind a table or figure, each query folded on its own: one statement that runs as it is in
    `harness db query "<statement>"`."""
    return "".join(
        f'<details class="sql"><summary>SQL{f" {i + 1} of {len(queries)}" if len(queries) > 1 else ""}</summary>'
        f"<pre>{escape(query.strip())}</pre></details>"
        for i, query in enumerate(queries)
    )
