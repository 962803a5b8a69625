"""`import_lightning` keeps torchmetrics' optional integrations out of a training process (they cost half of
Lightning's import), leaves the rest of the process as it was, and a worker imports through it. Each check
runs in a fresh interpreter: what a process imported first is the point."""

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # waits on processes or builds a shared store first

OPTIONAL = ("scipy", "transformers", "matplotlib")


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", f"import json, sys\n{code}"], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out.splitlines()[-1])


def test_a_worker_imports_lightning_without_the_optional_packages_which_import_normally_afterwards():
    seen = _run(
        "from experiments.workers.worker import import_training\n"
        "import_training()\n"
        f"hidden = sorted(m for m in {OPTIONAL!r} if m in sys.modules)\n"
        "import importlib.metadata, scipy.stats, matplotlib\n"
        "from lightning.pytorch import Trainer\n"
        "print(json.dumps({'hidden': hidden, 'finders': [type(f).__name__ for f in sys.meta_path],\n"
        "                  'trainer': 'harness.train.run' in sys.modules and Trainer.__name__,\n"
        "                  'scipy': scipy.stats.norm.cdf(0.0), 'transformers': "
        "importlib.metadata.version('transformers')}))"
    )
    assert seen["hidden"] == []  # none of them was imported on the way to a trainable process
    assert seen["trainer"] == "Trainer" and "_Absent" not in seen["finders"]
    assert seen["scipy"] == 0.5 and seen["transformers"]  # afterwards they are installed packages as before


def test_a_package_imported_before_stays_visible_to_torchmetrics():
    seen = _run(
        "import scipy\n"
        "from harness.train.lightning_import import import_lightning\n"
        "import_lightning()\n"
        "from torchmetrics.utilities.imports import _SCIPY_AVAILABLE\n"
        "print(json.dumps({'scipy.signal': 'scipy.signal' in sys.modules, 'available': bool(_SCIPY_AVAILABLE),\n"
        "                  'matplotlib': 'matplotlib' in sys.modules}))"
    )
    assert seen == {"scipy.signal": True, "available": True, "matplotlib": False}
