"""Import Lightning without the optional packages torchmetrics loads for metrics no run of ours computes.

Lightning imports torchmetrics (for `self.log` of Metric objects), and torchmetrics' package `__init__`
imports scipy.signal, transformers (for BERTScore) and matplotlib (for `.plot()`) whenever they are
installed, as they are here (scipy and matplotlib for analysis, transformers for the HF parity tests):
about half of the CPU `import lightning.pytorch` takes (docs/benchmarks.md, "Start-up"). A process that
only trains (a sweep worker, `harness run`) calls `import_lightning()` before anything else imports
Lightning. During that import one finder, first on `sys.meta_path` (the documented hook that both the
import system and `importlib.metadata` consult), reports those packages as absent, so torchmetrics'
availability checks skip them; afterwards the finder is gone and they import normally (an Optuna sampler
may want scipy). Only torchmetrics' own metrics that need them stay unavailable in that process. Packages
already imported are left alone, and so is a process that imported Lightning already.
"""

from __future__ import annotations

import importlib.abc
import re
import sys
from importlib.metadata import DistributionFinder, PackageNotFoundError

OPTIONAL = ("scipy", "transformers", "matplotlib")  # torchmetrics imports each only when it finds it installed


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


class _Absent(importlib.abc.MetaPathFinder):
    """Makes the named top-level packages look uninstalled: to `import`, `importlib.util.find_spec` and
    `importlib.metadata` alike."""

    def __init__(self, packages: list[str]) -> None:
        self.packages = frozenset(packages)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in self.packages:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden by harness.train.lightning_import while "
                                      "Lightning is imported)", name=fullname)
        return None  # everything else: the next finder's business

    def find_distributions(self, context=DistributionFinder.Context()):
        if context.name is not None and _normalized(context.name) in self.packages:
            raise PackageNotFoundError(context.name)
        return iter(())


def import_lightning() -> None:
    """Import `lightning.pytorch` with OPTIONAL hidden (see the module docstring); torch is imported first,
    outside the hiding, so that only Lightning's own import graph is affected."""
    if "lightning" in sys.modules:
        return
    import torch  # noqa: F401

    finder = _Absent([name for name in OPTIONAL if name not in sys.modules])
    sys.meta_path.insert(0, finder)
    try:
        import lightning.pytorch  # noqa: F401
    finally:
        sys.meta_path.remove(finder)
