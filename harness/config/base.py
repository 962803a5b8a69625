"""Shared machinery of the frozen config dataclasses: validation helpers, dict round-trip, content hash.

No torch here: configs are built, validated and hashed long before (and far from) any model.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import types
import typing
from typing import Any, Callable, Iterable, Mapping, ParamSpec, Self, TypeVar

from errors import ConfigError, closest

P = ParamSpec("P")
R = TypeVar("R")


def class_cache(function: Callable[P, R]) -> Callable[P, R]:
    """`functools.cache` that keeps `function`'s signature. mypy reads a class object's `__hash__` as the
    unbound instance method, so it rejects a class as an argument of the bare cache (typed `*args: Hashable`),
    though classes hash fine; the cache calls `function` with exactly the arguments it gets."""
    return typing.cast(Callable[P, R], functools.cache(function))


def check_choice(owner: str, field: str, value: Any, options: Iterable[str]) -> None:
    """Raise ConfigError unless `value` is one of `options`, suggesting the closest one."""
    options = list(options)
    if value in options:
        return
    hint = closest(value, options) if isinstance(value, str) else None
    suggestion = f" Did you mean {hint!r}?" if hint else ""
    raise ConfigError(
        f"{owner}.{field}={value!r} is not a valid choice; valid options: {', '.join(map(repr, options))}.{suggestion}"
    )


def invalid(owner: str, field: str, value: Any, requirement: str) -> ConfigError:
    """The error for `owner.field=value`; `requirement` says what would be valid."""
    return ConfigError(f"{owner}.{field}={value!r} is invalid: {requirement}.")


def check(condition: bool, owner: str, field: str, value: Any, requirement: str) -> None:
    """Raise ConfigError naming field and value unless `condition` holds; `requirement` says what would."""
    if not condition:
        raise invalid(owner, field, value, requirement)


def check_positive(owner: str, field: str, value: Any, allow_none: bool = False, allow_zero: bool = False) -> None:
    """Positive (or non-negative with allow_zero) number, optionally None."""
    if value is None and allow_none:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (value >= 0 if allow_zero else value > 0)
    bound = "non-negative" if allow_zero else "positive"
    check(ok, owner, field, value, f"must be a {bound} number" + (" or None" if allow_none else ""))


def check_int(owner: str, field: str, value: Any, minimum: int = 1, allow_none: bool = False) -> None:
    """An int ≥ minimum (optionally None); bools are rejected even though they are ints."""
    if value is None and allow_none:
        return
    ok = isinstance(value, int) and not isinstance(value, bool) and value >= minimum
    check(ok, owner, field, value, f"must be an integer ≥ {minimum}" + (" or None" if allow_none else ""))


@class_cache  # every config construction asks; get_type_hints re-evaluates every annotation (~1 ms a call)
def literal_options(cls: type, field: str) -> tuple[str, ...]:
    """The allowed strings of a `Literal[...]` field, read from the type hints (one source of truth)."""
    return typing.get_args(_type_hints(cls)[field])


@class_cache
def _type_hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@class_cache  # asked for every field of every config built
def field_type(cls: type, field: str) -> tuple[Any, bool]:
    """(underlying type, optional?) of field `field`'s annotation, e.g. (int, True) for `int | None`."""
    return _base_type(_type_hints(cls)[field])


def _base_type(hint: Any) -> tuple[Any, bool]:
    """(underlying type, optional?) for a field annotation such as `int | None` or `Literal[...]`."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return (args[0] if len(args) == 1 else hint), True
    return hint, False


def parse_field_value(cls: type, field: str, text: str) -> Any:
    """Parse a command-line string (`--set field=value`) into the field's declared type."""
    hint, optional = _base_type(_type_hints(cls)[field])
    if optional and text.strip().lower() in ("none", "null", ""):
        return None
    if typing.get_origin(hint) is typing.Literal:
        return text
    if hint is bool:
        lowered = text.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{cls.__name__}.{field}={text!r} is invalid: expected true or false.")
    if hint is int:
        try:
            return int(text)
        except ValueError:
            try:
                as_float = float(text)
            except ValueError:
                as_float = None
            if as_float is not None and as_float.is_integer():
                return int(as_float)
            raise ConfigError(f"{cls.__name__}.{field}={text!r} is invalid: expected an integer.") from None
    if hint is float:
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{cls.__name__}.{field}={text!r} is invalid: expected a number.") from None
    return text


@class_cache
def float_fields(cls: type) -> frozenset[str]:
    """Fields annotated `float` or `float | None`."""
    return frozenset(name for name, hint in _type_hints(cls).items() if _base_type(hint)[0] is float)


class ConfigBase:
    """Mixin for frozen config dataclasses: `to_dict`, `from_dict`, `replace`, `content_hash`."""

    def store_floats(self) -> None:
        """Store int values of float fields as floats (call first in `__post_init__`): `lr=1` and `lr=1.0` are
        equal configs, so they must also share a content hash (the run key) and a column type in the store."""
        for name in float_fields(type(self)):
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                object.__setattr__(self, name, float(value))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of every field (derived fields already resolved). Fields hold plain immutable
        values, so no deep copy is needed (`dataclasses.asdict` made a sweep's expansion 4x slower)."""
        return {name: getattr(self, name) for name in _field_names(type(self))}

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return _field_names(cls)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Build from a dict; unknown keys are an error that lists the valid ones."""
        names = frozenset(_field_names(cls))
        unknown = [k for k in data if k not in names]
        if unknown:
            hints = [f"{k!r} (did you mean {closest(k, cls.field_names())!r}?)" if closest(k, cls.field_names())
                     else repr(k) for k in unknown]
            raise ConfigError(
                f"{cls.__name__} has no field {', '.join(hints)}; valid fields: {', '.join(cls.field_names())}."
            )
        return cls(**dict(data))

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (validated again). Unknown names are an error."""
        return type(self).from_dict({**self.to_dict(), **changes})

    def changed_fields(self) -> dict[str, Any]:
        """The fields whose value differs from the class defaults (derived fields compared once resolved)."""
        defaults = _default_dict(type(self))
        return {name: value for name, value in self.to_dict().items()
                if name not in defaults or defaults[name] != value}

    def defining_fields(self) -> dict[str, Any]:
        """The changed fields, plus every derived field the changed ones alone would resolve otherwise: what
        `from_dict` rebuilds exactly this config from. n_kv_heads=4 beside n_heads=8 equals the default's resolved
        4, so it is no changed field, yet n_heads=8 alone resolves it to 8 (a GQA arm rebuilt as MHA)."""
        fields, mine = self.changed_fields(), self.to_dict()
        for _ in mine:  # each pass pins at least one more field, so this ends
            try:
                rebuilt = type(self).from_dict(fields).to_dict()
            except ConfigError:  # the changed fields alone break a rule the derived values satisfied
                return mine
            missing = {name: value for name, value in mine.items() if rebuilt[name] != value}
            if not missing:
                return fields
            fields |= missing
        return mine

    def hashed_fields(self) -> dict[str, Any]:
        """What the content hash covers: the changed fields (a config may leave out ones that change no result)."""
        return self.changed_fields()

    def content_hash(self) -> str:
        """Stable 16-hex-digit hash of the fields that differ from the defaults: equal configs, equal keys, and a
        later version that adds a field at its default leaves every existing key (every stored run id) alone.
        Computed once per (immutable) instance: a sweep hashes each arm's configs for every one of its cells."""
        cached = self.__dict__.get("_content_hash")
        if cached is None:
            canonical = json.dumps({"type": type(self).__name__, **self.hashed_fields()}, sort_keys=True,
                                   separators=(",", ":"))
            cached = hashlib.sha256(canonical.encode()).hexdigest()[:16]
            object.__setattr__(self, "_content_hash", cached)
        return cached


@class_cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


@class_cache
def _default_dict(cls: type) -> dict[str, Any]:
    return cls().to_dict()
