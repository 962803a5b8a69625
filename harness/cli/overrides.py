"""`--set field=value` options: parsed into a config's declared field types, unknown fields refused."""

from __future__ import annotations

from typing import Any

from harness.config.base import ConfigError, closest, parse_field_value


def parse_overrides(config_cls: type, pairs: list[str]) -> dict[str, Any]:
    """`["d_model=512", "qk_norm=rmsnorm"]` → {"d_model": 512, "qk_norm": "rmsnorm"} for `config_cls`.

    An entry without '=' or naming no field of `config_cls` raises ConfigError with the valid fields and the
    closest one; a value of the wrong type raises from `parse_field_value`.
    """
    fields = config_cls.field_names()
    overrides: dict[str, Any] = {}
    for pair in pairs:
        name, separator, text = pair.partition("=")
        name = name.strip()
        if not separator:
            raise ConfigError(f"--set {pair!r} is invalid: expected field=value, e.g. --set d_model=512.")
        if name not in fields:
            hint = closest(name, fields)
            suggestion = f" Did you mean {hint!r}?" if hint else ""
            raise ConfigError(
                f"--set {name}={text!r}: {config_cls.__name__} has no field {name!r}.{suggestion} "
                f"Valid fields: {', '.join(fields)}."
            )
        overrides[name] = parse_field_value(config_cls, name, text)
    return overrides
