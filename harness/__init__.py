"""harness: the ablation lab for transformer language-model architecture.

Importing this package is cheap on purpose (no torch): the CLI and `db`/`analysis` users pay only for
what they touch.
"""

__version__ = "0.1.0"
