"""The default run id: a content hash of a run's three configs. Torch-free (the CLI uses it before any import)."""

from __future__ import annotations

import hashlib
import json

from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig


def run_key(model: ModelConfig, train: TrainConfig, data: DataConfig) -> str:
    """16 hex digits; equal configs give equal keys, any changed field a different one."""
    hashes = {"model": model.content_hash(), "train": train.content_hash(), "data": data.content_hash()}
    return hashlib.sha256(json.dumps(hashes, sort_keys=True).encode()).hexdigest()[:16]
