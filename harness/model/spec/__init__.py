"""Torch-free parameter declarations of every component, `fn(cfg, layer, ...) -> Params` with `layer` the 0-based
block (None outside the blocks; see `params.py`); `decoder.py` assembles a whole model."""
