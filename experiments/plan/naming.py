"""Readable arm names from the switch values that differ from the base: `qk_norm=rmsnorm,attn_softcap=50`; and
the display labels the grid gave some values (`grid(mlp={"SwiGLU": "swiglu"})`), which never change a name."""

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


def arm_label(values: Mapping[str, Any], labels: Mapping[str, str], base: Mapping[str, Any]) -> str | None:
    """The arm's display label, or None when its grid point labels none of its values: each labelled field's
    label (even where the value is the base's: the user named it), then `name=value` for the unlabelled fields
    that differ from `base`, in the grid's axis order."""
    if not labels:
        return None
    parts = [labels[name] if name in labels else f"{name}={format_value(value)}"
             for name, value in values.items() if name in labels or base.get(name) != value]
    return ", ".join(parts)
