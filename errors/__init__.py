"""The errors and hints every layer shares: bad input is a `ConfigError` whose message names what was wrong
and what would be valid, and `closest` finds the 'did you mean' option. The command line prints a
`ConfigError` as one line and exits 2.

This package sits below all the others (ablations, experiments, harness, db, analysis, cli) and imports
none of them, nor torch: any layer may raise these errors without pulling another layer in.
"""

from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["ConfigError", "closest", "did_you_mean"]


class ConfigError(ValueError):
    """A value is invalid; the message names the field, the value and what would be valid."""


def closest(value: str, options: Iterable[str]) -> str | None:
    """The option most like `value` (for 'did you mean' hints), or None when nothing is close; case-blind."""
    by_lower = {option.lower(): option for option in options}
    matches = difflib.get_close_matches(str(value).lower(), list(by_lower), n=1, cutoff=0.5)
    return by_lower[matches[0]] if matches else None


def did_you_mean(value: str, options: Iterable[str]) -> str:
    """"; did you mean 'x'?" for the option closest to `value`, or "" when none is close (a message's tail)."""
    hint = closest(value, options)
    return f"; did you mean {hint!r}?" if hint else ""
