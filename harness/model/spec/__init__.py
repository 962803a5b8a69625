"""Torch-free parameter declarations of every component (see `params.py`); `decoder.py` assembles a whole model."""
