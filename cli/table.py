"""Plain-text tables for the terminal: columns padded to their widest cell, numbers right-aligned."""

from __future__ import annotations

from typing import Sequence


def render_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Rows of cells under `headers`; ints get thousands separators and, like floats, align right."""
    cells = [list(headers)] + [[f"{c:,}" if isinstance(c, int) and not isinstance(c, bool) else str(c) for c in row]
                               for row in rows]
    numeric = [all(isinstance(row[i], (int, float)) and not isinstance(row[i], bool) for row in rows)
               for i in range(len(headers))]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "  ".join(cell.rjust(width) if is_number else cell.ljust(width)
                  for cell, width, is_number in zip(row, widths, numeric)).rstrip()
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
