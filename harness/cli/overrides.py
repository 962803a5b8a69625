"""`--set field=value` options: parsed into the declared field types of the config that owns each field."""

from __future__ import annotations

from typing import Any

from harness.config.base import ConfigError, closest, parse_field_value


def split_overrides(config_classes: tuple[type, ...], pairs: list[str]) -> dict[type, dict[str, Any]]:
    """`["d_model=512", "lr=3e-3"]` → {ModelConfig: {"d_model": 512}, TrainConfig: {"lr": 0.003}, ...}.

    Field names are disjoint across `config_classes`, so each pair has one owner. An entry without '=' or
    naming no field raises ConfigError listing the valid fields and the closest one; a value of the wrong
    type raises from `parse_field_value`.
    """
    owners = {name: cls for cls in config_classes for name in cls.field_names()}
    grouped: dict[type, dict[str, Any]] = {cls: {} for cls in config_classes}
    for pair in pairs:
        name, separator, text = pair.partition("=")
        name = name.strip()
        if not separator:
            raise ConfigError(f"--set {pair!r} is invalid: expected field=value, e.g. --set d_model=512.")
        if name not in owners:
            hint = closest(name, owners)
            suggestion = f" Did you mean {hint!r}?" if hint else ""
            valid = "; ".join(f"{cls.__name__}: {', '.join(cls.field_names())}" for cls in config_classes)
            raise ConfigError(f"--set {name}={text!r}: there is no field {name!r}.{suggestion} Valid fields — {valid}.")
        grouped[owners[name]][name] = parse_field_value(owners[name], name, text)
    return grouped
