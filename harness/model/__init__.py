"""The configurable decoder: `build_model(cfg)` turns a `ModelConfig` into a `Transformer`.

The torch parts load on first use, so the torch-free registry and declarations (`harness.model.registry`,
`harness.model.spec`) can be read by `harness.calc` and config validation without importing torch.
"""

__all__ = ["KVCache", "Transformer", "build_model"]


def build_model(cfg):
    """A freshly initialized model for `cfg` (float32, on the CPU; move it with `.to(...)`)."""
    from harness.model.transformer import Transformer

    return Transformer(cfg)


def __getattr__(name: str):
    if name == "Transformer":
        from harness.model.transformer import Transformer

        return Transformer
    if name == "KVCache":
        from harness.model.cache import KVCache

        return KVCache
    raise AttributeError(f"module 'harness.model' has no attribute {name!r}")
