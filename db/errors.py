"""Errors of the results store; all are `ValueError`s so callers can treat them as bad input."""

from errors import ConfigError


class DbError(ValueError):
    """A results-store operation cannot proceed; the message says why and what to do."""


class NoResultsError(DbError):
    """The results directory is missing or holds no runs yet."""


class SchemaVersionError(DbError):
    """Data were written by a newer (or unknown) schema version than this code understands."""


class ReadOnlyQueryError(DbError):
    """A query tried to change something; `harness db query` only reads."""


class StoreDamage(DbError, ConfigError):
    """A file the command needs is damaged (truncated, garbled, inconsistent); `paths` names it (them).

    Also a `ConfigError`, so every command prints it as one line and exits 2, as for any input it cannot use.
    """

    def __init__(self, message: str, paths: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.paths = tuple(str(p) for p in paths)


class CorruptShardWarning(UserWarning):
    """A store file (a shard, a sweep's plan or description, the index) could not be read and was left out."""
