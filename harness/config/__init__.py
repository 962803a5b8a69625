"""Frozen, torch-free configuration dataclasses; `harness.config.ModelConfig` etc."""

from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig

__all__ = ["DataConfig", "ModelConfig", "TrainConfig"]
