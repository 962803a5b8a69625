"""Frozen, torch-free configuration dataclasses; `harness.config.ModelConfig` etc."""

from harness.config.base import ConfigError
from harness.config.model import ModelConfig

__all__ = ["ConfigError", "ModelConfig"]
