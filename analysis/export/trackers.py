"""The trackers a sweep exports to: each an optional extra of the install, a writer module of this package,
and what a user runs to look at the result."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from analysis.errors import AnalysisError


@dataclass(frozen=True)
class Tracker:
    """One export target. `name` is the `--to` value, the writer module (`analysis.export.<name>`) and the
    extra that installs `package` (`pip install 'harness[<name>]'`)."""

    name: str
    title: str  # what the user knows it as
    package: str  # the library's import name
    form: str  # what the export writes
    view: str  # how to look at it, with `{dir}` for the export directory

    def writer(self) -> ModuleType:
        """The writer module: `write(runs, out_dir, progress)` and the `ENVIRONMENT` it runs under (if any)."""
        return importlib.import_module(f"analysis.export.{self.name}")

    def require(self) -> None:
        """Import the library; AnalysisError (one line: the extra to install) when it cannot be."""
        try:
            importlib.import_module(self.package)
        except ImportError as err:
            raise AnalysisError(f"--to {self.name} needs the {self.package} package ({err}): "
                                f"pip install 'harness[{self.name}]'") from err


TRACKERS = {tracker.name: tracker for tracker in (
    Tracker("tensorboard", "TensorBoard", "tensorboard", "event files", "tensorboard --logdir {dir}"),
    Tracker("wandb", "W&B", "wandb", "offline runs", "wandb sync {dir}/wandb/offline-run-*"),
    Tracker("mlflow", "MLflow", "mlflow", "file store",
            "MLFLOW_ALLOW_FILE_STORE=true mlflow ui --backend-store-uri {dir}"),
)}
