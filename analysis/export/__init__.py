"""A sweep's runs in TensorBoard, W&B or MLflow, written by the real libraries in their offline forms
(docs/export.md). Each library is an optional extra and is imported only when an export runs.

    from analysis.export import export_sweep
    export_sweep("results", "qk_stability", "tensorboard", "tb")     # then: tensorboard --logdir tb
"""

from analysis.export.sweep import Exported, export_sweep
from analysis.export.trackers import TRACKERS

__all__ = ["TRACKERS", "Exported", "export_sweep"]
