"""The one error analysis raises for bad input; a `ConfigError`, so the CLI prints one line and exits 2."""

from harness.config.base import ConfigError


class AnalysisError(ConfigError):
    """A sweep, arm or metric cannot be analysed as asked; the message says why and what would work."""
