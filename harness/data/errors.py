"""`DataError`: the corpus or its cache cannot give a run what it asks for."""

from errors import ConfigError


class DataError(ConfigError):
    """Bad data input (missing path, empty corpus, unknown field, dataset not available offline).

    A `ConfigError`, so the CLI prints it as one line and exits 2 before any training starts.
    """
