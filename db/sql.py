"""Quoting for SQL text built from names and paths (DuckDB syntax)."""

from __future__ import annotations


def quote_literal(text: str) -> str:
    """`text` as a SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def quote_ident(name: str) -> str:
    """`name` as a SQL identifier (config keys may hold dots)."""
    return '"' + name.replace('"', '""') + '"'
