"""Errors of the results store; all are `ValueError`s so callers can treat them as bad input."""


class DbError(ValueError):
    """A results-store operation cannot proceed; the message says why and what to do."""


class NoResultsError(DbError):
    """The results directory is missing or holds no runs yet."""


class SchemaVersionError(DbError):
    """Data were written by a newer (or unknown) schema version than this code understands."""


class ReadOnlyQueryError(DbError):
    """A query tried to change something; `harness db query` only reads."""


class CorruptShardWarning(UserWarning):
    """A shard (or the index) could not be read and was left out of the views."""
