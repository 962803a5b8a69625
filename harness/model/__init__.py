"""The configurable decoder: `build_model(cfg)` turns a `ModelConfig` into a `Transformer`."""

from harness.config.model import ModelConfig
from harness.model.cache import KVCache
from harness.model.transformer import Transformer


def build_model(cfg: ModelConfig) -> Transformer:
    """A freshly initialized model for `cfg` (float32, on the CPU; move it with `.to(...)`)."""
    return Transformer(cfg)


__all__ = ["KVCache", "Transformer", "build_model"]
