"""Installed packages hidden for the duration of one import, so an optional integration that would load
them is skipped: a finder first on `sys.meta_path` (the documented hook that both the import system and
`importlib.metadata` consult) reports them absent, and is removed afterwards, when they import normally.
Used where a process only trains and writes the store and the integrations cost seconds at start-up:
Lightning's torchmetrics (harness.train.lightning_import) and pyarrow's pandas shim (`arrow_without_pandas`).
"""

from __future__ import annotations

import importlib.abc
import re
import sys
from contextlib import contextmanager
from importlib.metadata import DistributionFinder, PackageNotFoundError


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


class _Absent(importlib.abc.MetaPathFinder):
    """Makes the named top-level packages look uninstalled: to `import`, `importlib.util.find_spec` and
    `importlib.metadata` alike."""

    def __init__(self, packages: list[str]) -> None:
        self.packages = frozenset(packages)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in self.packages:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden by db.hidden_imports for one import)",
                                      name=fullname)
        return None  # everything else: the next finder's business

    def find_distributions(self, context=DistributionFinder.Context()):
        if context.name is not None and _normalized(context.name) in self.packages:
            raise PackageNotFoundError(context.name)
        return iter(())


@contextmanager
def hidden(packages: tuple[str, ...]):
    """Within the block, `packages` (those not imported already) look uninstalled."""
    finder = _Absent([name for name in packages if name not in sys.modules])
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


def arrow_without_pandas() -> None:
    """Let pyarrow settle, once per process, on building arrays without pandas. Its lazy shim tries `import
    pandas` at the first array built from Python values (to recognize pandas inputs), 0.6 s of CPU that a
    sweep worker would pay on its first cell's clock; tried while pandas is hidden, the shim remembers it as
    absent for that check only, and an explicit use (`to_pandas`) still imports it then. A process that
    imported pandas or built an array already is left as it is."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    with hidden(("pandas",)):
        pa.array([0])
