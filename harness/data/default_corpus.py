"""The built-in corpus: English prose that every CPython installation carries, so it works offline anywhere.

Two parts, both written by the Python documentation team:
- `pydoc_data.topics`: the language reference and tutorial topics behind `help()` (~0.47 MB in 3.11);
- docstrings of the standard library's own modules, classes and functions of at least
  `MIN_DOCSTRING_CHARS` characters (~1.3 MB in 3.11), read with `ast` so no module is imported (importing
  `antigravity` opens a browser; `this` prints a poem).
Documents are ordered by their content hash, which interleaves topics and docstrings, so the validation
split at the end of the token stream is a sample of the whole corpus rather than its last modules.
The text differs a little between Python versions; the corpus hash, not the version, keys the caches.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import pydoc_data.topics
import sys
import sysconfig
from pathlib import Path

from harness.data.progress import progress

# One-line docstrings ("Return x.") repeat a few patterns and add little prose.
MIN_DOCSTRING_CHARS = 200
# Directories of the standard library whose code is test data, not documentation.
SKIPPED_DIRS = {"site-packages", "dist-packages", "test", "tests", "idle_test", "__pycache__"}


def stdlib_sources() -> list[Path]:
    """The standard library's .py files (tests and installed packages excluded), in a stable order."""
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.rglob("*.py") if not SKIPPED_DIRS.intersection(p.relative_to(root).parts))


def default_fingerprint() -> str:
    """Cheap identity of the default corpus: the Python build and where its standard library lives.

    A standard library does not change under one `sys.version` (which names the build date), so this
    stands in for reading the files; the corpus hash computed from the text remains the real cache key.
    """
    identity = f"default-v1\0{sys.version}\0{sysconfig.get_paths()['stdlib']}\0{MIN_DOCSTRING_CHARS}"
    return hashlib.sha256(identity.encode()).hexdigest()


def _docstrings(path: Path) -> list[str]:
    """Docstrings of the module, classes and functions in one source file that are long enough to be prose."""
    try:
        tree = ast.parse(path.read_bytes())
    except (SyntaxError, ValueError):  # a few stdlib files are templates or Python-2 test fixtures
        return []
    nodes = (n for n in ast.walk(tree)
             if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)))
    texts = (ast.get_docstring(n) for n in nodes)
    return [t for t in texts if t and len(t) >= MIN_DOCSTRING_CHARS]


@functools.cache  # parsing the standard library takes seconds; a process preparing several vocab sizes pays once
def default_documents() -> tuple[str, ...]:
    """The documents of the default corpus: pydoc topics and long stdlib docstrings, deduplicated, hash-ordered."""
    documents = set(pydoc_data.topics.topics.values())
    for path in progress(stdlib_sources(), desc="reading stdlib docstrings", unit="file"):
        documents.update(_docstrings(path))
    stripped = {d.strip() for d in documents} - {""}
    return tuple(sorted(stripped, key=lambda d: hashlib.sha256(d.encode()).digest()))
