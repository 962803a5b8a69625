"""Flattening a run's config into `name → scalar` so every switch becomes its own SQL column."""

from __future__ import annotations

import json
from typing import Any, Mapping

SCALARS = (str, int, float, bool, type(None))


def flatten_config(config: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested dicts become dotted keys (`{"model": {"d": 1}}` → `{"model.d": 1}`); lists become JSON text."""
    flat: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten_config(value, prefix=f"{name}."))
        elif isinstance(value, SCALARS):
            flat[name] = value
        elif isinstance(value, (list, tuple)):
            flat[name] = json.dumps(value)
        elif hasattr(value, "item"):  # numpy scalars
            flat[name] = value.item()
        else:
            flat[name] = str(value)
    return flat
