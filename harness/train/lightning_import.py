"""Import Lightning without the optional packages torchmetrics loads for metrics no run of ours computes.

Lightning imports torchmetrics (for `self.log` of Metric objects), and torchmetrics' package `__init__`
imports scipy.signal, transformers (for BERTScore) and matplotlib (for `.plot()`) whenever they are
installed, as they are here (scipy and matplotlib for analysis, transformers for the HF parity tests):
about half of the CPU `import lightning.pytorch` takes (docs/benchmarks.md, "Start-up"). A process that
only trains (a sweep worker, `harness run`) calls `import_lightning()` before anything else imports
Lightning. During that import those packages look uninstalled (db.hidden_imports), so torchmetrics'
availability checks skip them; afterwards they import normally (an Optuna sampler
may want scipy). Only torchmetrics' own metrics that need them stay unavailable in that process. Packages
already imported are left alone, and so is a process that imported Lightning already.
"""

from __future__ import annotations

import sys

from db.hidden_imports import arrow_without_pandas, hidden

OPTIONAL = ("scipy", "transformers", "matplotlib")  # torchmetrics imports each only when it finds it installed


def import_lightning() -> None:
    """Import `lightning.pytorch` with OPTIONAL hidden (see the module docstring); torch is imported first,
    outside the hiding, so that only Lightning's own import graph is affected. A training process writes the
    store and never reads it into pandas, so pyarrow is told to build its arrays without pandas too
    (`arrow_without_pandas`: 0.6 s of CPU on a run's first write otherwise)."""
    arrow_without_pandas()
    if "lightning" in sys.modules:
        return
    import torch  # noqa: F401

    with hidden(OPTIONAL):
        import lightning.pytorch  # noqa: F401
