"""`RunConfigs`: a run's three configs (model, train, data) as one value. It is the one owner of which config
a field belongs to, of flat overrides (`replace(d_model=256, lr=1e-3)`), of a preset (or base model) followed
by overrides, of the 'no such field' error, and of the rules that span configs (`check`). Torch-free: every
command, an ablation's expansion and a search's trials build their configs through it.

Field names are unique across the three classes, so a flat name always has exactly one owner.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, TypeVar

from errors import ConfigError, closest
from harness.config.base import ConfigBase, parse_field_value
from harness.config.data import DataConfig
from harness.config.model import ModelConfig
from harness.config.train import TrainConfig

CONFIG_CLASSES: tuple[type[ConfigBase], ...] = (ModelConfig, TrainConfig, DataConfig)
C = TypeVar("C", bound=ConfigBase)


@functools.cache
def field_owners() -> dict[str, type[ConfigBase]]:
    """Every field name → the config class that owns it."""
    return {name: cls for cls in CONFIG_CLASSES for name in cls.field_names()}


def owner(name: str, where: str, classes: tuple[type[ConfigBase], ...] = CONFIG_CLASSES) -> type[ConfigBase]:
    """The config class owning field `name`; else a ConfigError naming `where` it was asked, the closest field
    and every valid one (of `classes`)."""
    owners = {field: cls for field, cls in field_owners().items() if cls in classes}
    if name in owners:
        return owners[name]
    hint = closest(name, owners)
    valid = "; ".join(f"{cls.__name__}: {', '.join(cls.field_names())}" for cls in classes)
    raise ConfigError(f"{where} names no field {name!r}" + (f"; did you mean {hint!r}?" if hint else "")
                      + f" Valid fields — {valid}.")


def route(values: Mapping[str, Any], where: str,
          only: type[ConfigBase] | None = None) -> dict[type[ConfigBase], dict[str, Any]]:
    """Flat field → value pairs grouped by owning class ({ModelConfig: {...}, TrainConfig: {...}, ...}).
    With `only`, every field must belong to that class (an ablation's `train=` takes TrainConfig fields)."""
    grouped: dict[type[ConfigBase], dict[str, Any]] = {cls: {} for cls in CONFIG_CLASSES}
    for name, value in values.items():
        grouped[owner(name, where)][name] = value
    wrong = [name for cls, fields in grouped.items() if only is not None and cls is not only for name in fields]
    if wrong and only is not None:  # wrong is empty without `only`; the checker needs it said
        raise ConfigError(f"{where} sets {', '.join(wrong)}, not {only.__name__} fields; put model switches in base or "
                          "the grid.")
    return grouped


def parse_overrides(pairs: Iterable[str], classes: tuple[type[ConfigBase], ...] = CONFIG_CLASSES) -> dict[str, Any]:
    """`--set` pairs (`["d_model=512", "lr=3e-3"]`) → {"d_model": 512, "lr": 0.003}, each value parsed to its
    field's declared type. A pair without '=', or naming a field none of `classes` has, is a ConfigError."""
    parsed: dict[str, Any] = {}
    for pair in pairs:
        name, separator, text = pair.partition("=")
        name = name.strip()
        if not separator:
            raise ConfigError(f"--set {pair!r} is invalid: expected field=value, e.g. --set d_model=512.")
        cls = owner(name, "--set", classes)
        parsed[name] = parse_field_value(cls, name, text)
    return parsed


@dataclass(frozen=True)
class RunConfigs:
    """The (model, train, data) configs of one run; unpacks as `model, train, data = configs`."""

    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)
    data: DataConfig = field(default_factory=DataConfig)

    @classmethod
    def of(cls, base: str | ModelConfig, *, train: TrainConfig | Mapping[str, Any] | None = None,
           data: DataConfig | Mapping[str, Any] | None = None, overrides: Mapping[str, Any] | None = None,
           where: str = "--set") -> "RunConfigs":
        """A preset (by name) or a base model, the train and data configs (or their fields), then flat
        `overrides`, which win over everything before them."""
        from harness.presets import from_name

        grouped = route(overrides or {}, where)
        model = from_name(base) if isinstance(base, str) else base
        if grouped[ModelConfig]:
            model = model.replace(**grouped[ModelConfig])
        return cls(model, _config(TrainConfig, train, "train=", grouped[TrainConfig]),
                   _config(DataConfig, data, "data=", grouped[DataConfig]))

    def apply(self, values: Mapping[str, Any], where: str) -> "RunConfigs":
        """A copy with flat field → value changes, each routed to its config (validated again); an unknown
        field is a ConfigError that names `where` the change came from."""
        grouped = route(values, where)
        return RunConfigs(*(config.replace(**grouped[type(config)]) if grouped[type(config)] else config
                            for config in self))

    def replace(self, **changes: Any) -> "RunConfigs":
        """A copy with flat field changes: `configs.replace(d_model=256, lr=1e-3, source="x.txt")`."""
        return self.apply(changes, "replace()")

    def check(self) -> "RunConfigs":
        """The rules no single config can check alone (returns self). max_seq_len is the model's longest
        sequence whatever its positions: RoPE and NoPE would run past it, but calc (its default context) and
        the HF import (max_position_embeddings) read it as the context length, so a longer training sequence
        is refused rather than trained silently."""
        if self.train.seq_len > self.model.max_seq_len:
            limit = "has learned positions for only" if self.model.positions == "learned" else ("takes sequences of at "
                                                                                                "most")
            raise ConfigError(
                f"TrainConfig.seq_len={self.train.seq_len} is invalid: the model {limit} "
                f"max_seq_len={self.model.max_seq_len} tokens; lower seq_len or raise max_seq_len."
            )
        return self

    def key(self) -> str:
        """The run id: the content hash of the three configs (`harness.train.keys.run_key`)."""
        from harness.train.keys import run_key

        return run_key(self.model, self.train, self.data)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.model, self.train, self.data))


def _config(cls: type[C], given: Any, where: str, overrides: Mapping[str, Any]) -> C:
    """A `cls` from `given` (an instance, a mapping of `cls`'s fields, or None for the defaults) with
    `overrides` on top, in one validation (a given field and an override may only be valid together)."""
    if isinstance(given, cls):
        return given.replace(**overrides) if overrides else given
    fields = route(given or {}, where, only=cls)[cls]
    return cls().replace(**{**fields, **overrides})
