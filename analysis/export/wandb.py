"""Weights & Biases: offline runs under `DIR/wandb/offline-run-*`, which `wandb sync` uploads later.

Project: the sweep's name; group: the arm (W&B's UI then shows each arm's seeds as one group); run name: the
harness run id. The W&B run id is a hash of (sweep, run id), the same at every export, so a re-export replaces
that run's offline directory (and `wandb sync` updates one run rather than adding another). Config: the run's
config; summary: under `harness` (`harness.status`, …), apart from the logged series' own summaries (`lr`).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

from analysis.export.runs import SweepRuns

SUMMARY_KEY = "harness"
# Offline, silent and nothing collected beyond the runs themselves (no git state, code, console or system stats).
SETTINGS: dict[str, Any] = {
    "mode": "offline", "silent": True, "console": "off", "disable_git": True, "disable_code": True, "save_code": False,
    "x_disable_stats": True, "x_disable_meta": True, "x_disable_machine_info": True,
}
ENVIRONMENT = {"WANDB_MODE": "offline", "WANDB_ERROR_REPORTING": "false", "WANDB_SILENT": "true"}
_NOT_IN_PROJECT_NAMES = re.compile(r"[/\\#?%:]")  # what W&B refuses in a project name (at most 128 characters)


def project_name(sweep: str) -> str:
    """The sweep's name as a W&B project: the characters W&B refuses become '-'."""
    return _NOT_IN_PROJECT_NAMES.sub("-", sweep)[:128]


def run_id(sweep: str, harness_run_id: str) -> str:
    """The W&B run id of a harness run exported from `sweep` (stable across exports)."""
    return hashlib.sha256(f"{sweep}\0{harness_run_id}".encode()).hexdigest()[:16]


def write(runs: SweepRuns, out_dir: Path, progress) -> None:
    """Write every run as an offline W&B run (see the module's docstring)."""
    import wandb

    wandb.setup(wandb.Settings(**SETTINGS))
    try:
        for run in progress(runs):
            identity = run_id(runs.name, run.run_id)
            for old in (out_dir / "wandb").glob(f"*/run-{identity}.wandb"):
                shutil.rmtree(old.parent)
            logged = wandb.init(dir=str(out_dir), project=project_name(runs.name), group=run.arm, name=run.run_id,
                                id=identity, config=run.config, settings=wandb.Settings(**SETTINGS))
            for step, values in run.by_step():
                logged.log(values, step=step)
            logged.summary[SUMMARY_KEY] = run.summary
            logged.finish(exit_code=1 if run.failed else 0)
    finally:
        wandb.teardown()
