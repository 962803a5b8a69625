"""The one error analysis raises for bad input; a `ConfigError` (errors/, below every layer), so the CLI
prints one line and exits 2. The rest of analysis takes the error and the 'did you mean' helper from here."""

from errors import ConfigError, closest

__all__ = ["AnalysisError", "closest", "suggestion"]


class AnalysisError(ConfigError):
    """A sweep, arm or metric cannot be analysed as asked; the message says why and what would work."""


def suggestion(value: str, options, what: str) -> str:
    """'; did you mean 'x'?' for the closest of `options`, else '; <what>: a, b.' (the end of an error message)."""
    options = list(options)
    hint = closest(value, options)
    return f"; did you mean {hint!r}?" if hint else f"; {what}: {', '.join(map(repr, options)) or 'none'}."
