"""Readable arm names from the switch values that differ from the base: `qk_norm=rmsnorm,attn_softcap=50`."""

from __future__ import annotations

from typing import Any, Mapping

BASE_ARM = "base"


def format_value(value: Any) -> str:
    """Compact text for a switch value: 50.0 → 50, 0.001 → 0.001, True → true, None → none."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float):
        return format(value, "g")
    return str(value)


def arm_name(values: Mapping[str, Any], base: Mapping[str, Any]) -> str:
    """`name=value` for each field of `values` that differs from `base`, in the grid's axis order; `base`
    when none does."""
    parts = [f"{name}={format_value(value)}" for name, value in values.items() if base.get(name) != value]
    return ",".join(parts) or BASE_ARM
