"""Hugging Face import: `model_config_from_hf(config.json dict)` (torch-free) and `from_hf(hf_model)`.

`from_hf` is loaded on first use so that reading a config (e.g. `harness calc --hf-config`) never imports torch.
"""

from harness.hf.config import model_config_from_hf

__all__ = ["from_hf", "model_config_from_hf"]


def __getattr__(name: str):
    if name == "from_hf":
        from harness.hf.weights import from_hf

        return from_hf
    raise AttributeError(f"module 'harness.hf' has no attribute {name!r}")
