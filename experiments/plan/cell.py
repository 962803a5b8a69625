"""`Cell`: one (arm, lr, seed) of a sweep with its three resolved configs and its key (= its run id), and
its row in the sweep plan stored with the results (configs as JSON, so any worker can train it)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig


def cell_label(arm: str, lr: float, seed: int, trial: int | None = None, confirms: int | None = None) -> str:
    """How displays name a cell: `arm lr=… seed=…`, plus `trial=…` for a search trial or `confirms=…` for a
    confirmation cell."""
    label = f"{arm} lr={lr:g} seed={seed}"
    if trial is not None:
        label += f" trial={trial}"
    if confirms is not None:
        label += f" confirms={confirms}"
    return label


@dataclass(frozen=True)
class Cell:
    """One unit of work of a sweep; `run_id` is `run_key(model, train, data)`."""

    index: int
    arm: str
    arm_values: dict[str, Any]
    lr: float
    seed: int
    model: ModelConfig
    train: TrainConfig
    data: DataConfig
    run_id: str
    params: int
    flops_per_token: int
    matched_residual: int | None = None
    trial: int | None = None
    confirms: int | None = None  # a confirmation cell: the trial whose configuration it reruns on a fresh seed
    arm_label: str | None = None  # what tables and legends call the arm (None: its name)

    @property
    def label(self) -> str:
        """`arm lr=… seed=…` (and `trial=…` or `confirms=…`) for displays and messages."""
        return cell_label(self.arm, self.lr, self.seed, self.trial, self.confirms)

    def plan_row(self) -> dict[str, Any]:
        """The cell as a row of `db.write_sweep`'s plan."""
        return {
            "arm": self.arm, "arm_label": self.arm_label, "lr": self.lr, "seed": self.seed, "trial": self.trial,
            "confirms": self.confirms, "run_id": self.run_id,
            "cell": self.index, "steps": self.train.steps,
            "matched_residual": None if self.matched_residual is None else float(self.matched_residual),
            "arm_values": json.dumps(self.arm_values, sort_keys=True, default=str),
            "model": json.dumps(self.model.defining_fields()), "train": json.dumps(self.train.defining_fields()),
            "data": json.dumps(self.data.defining_fields()),
        }

    @classmethod
    def from_plan_row(cls, row: Mapping[str, Any]) -> "Cell":
        """Rebuild a cell from its plan row (configs from their changed fields; params/FLOPs recounted)."""
        from harness import calc

        model = ModelConfig.from_dict(json.loads(row["model"]))
        train = TrainConfig.from_dict(json.loads(row["train"]))
        return cls(
            index=row["cell"], arm=row["arm"], arm_values=json.loads(row["arm_values"] or "{}"), lr=row["lr"],
            seed=row["seed"], model=model, train=train, data=DataConfig.from_dict(json.loads(row["data"])),
            run_id=row["run_id"], params=calc.params(model), flops_per_token=calc.flops_per_token(model, train.seq_len),
            matched_residual=None if row["matched_residual"] is None else int(row["matched_residual"]),
            trial=row["trial"], confirms=row.get("confirms"),  # plans written before confirmations have no such column
            arm_label=row.get("arm_label"),  # nor before labels
        )
