"""Running a user's SQL read-only: only SELECT statements pass, in a connection that cannot write files.

The statement check uses DuckDB's own parser (`extract_statements`), so `COPY … TO`, `ATTACH`, `PRAGMA`,
`SET`, `INSTALL` and every DDL/DML form are refused by type rather than by keyword spotting; after it the
connection is confined to the results directory and its settings locked, a second wall behind the first.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from db.errors import ReadOnlyQueryError
from db.sql import quote_literal

# `EXPLAIN ANALYZE` runs the statement it explains (a `COPY … TO` inside the results directory would write):
# so the statement after the prefix is checked like any other.
EXPLAIN_PREFIX = re.compile(r"\s*EXPLAIN\s+(?:ANALYZE\s+)?", re.IGNORECASE)


def check_read_only(con, sql: str) -> None:
    """Raise ReadOnlyQueryError unless `sql` is exactly one SELECT, or `EXPLAIN [ANALYZE]` of one."""
    statements = con.extract_statements(sql)
    if len(statements) != 1:
        raise ReadOnlyQueryError(f"expected exactly one SQL statement, got {len(statements)}.")
    kind, text = statements[0].type.name, statements[0].query
    if kind == "EXPLAIN":
        prefix = EXPLAIN_PREFIX.match(text)
        if prefix is None:
            raise ReadOnlyQueryError("EXPLAIN is allowed only as `EXPLAIN [ANALYZE] SELECT ...`.")
        check_read_only(con, text[prefix.end():])
    elif kind != "SELECT":
        raise ReadOnlyQueryError(
            f"{kind} statements are not allowed: queries are read-only (SELECT only); the results are changed only by "
            "runs."
        )


def lock_down(con, results_dir: Path) -> None:
    """Confine `con` to reading under `results_dir` and lock its settings."""
    root = os.path.abspath(results_dir) + os.sep
    con.execute(f"SET allowed_directories = [{quote_literal(root)}]")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def read_only_relation(con, sql: str, results_dir: Path):
    """The DuckDB relation of a checked read-only query on a locked-down connection."""
    check_read_only(con, sql)
    lock_down(con, results_dir)
    return con.sql(sql)
