"""Cross-field rules of a config as data: one table that the config's `__post_init__` evaluates in order and
that tests read (which settings a field needs to mean anything), instead of hand-written checks."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from harness.config.base import invalid

Requirement = str | Callable[[Any], str]  # a text, or a function of the config for one that quotes values


@dataclass(frozen=True)
class Rule:
    """`field` must satisfy `holds(config)`; otherwise ConfigError names the field, its value and
    `requirement` (what would make it valid). `enabled_by`: for a field that only applies beside another
    setting, one such setting (what a test sets to try the field's values)."""

    field: str
    holds: Callable[[Any], bool]
    requirement: Requirement
    enabled_by: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # bare `field` is the str above to mypy


def only_when(
    name: str, applies: Callable[[Any], bool], requirement: Requirement, enabled_by: Mapping[str, Any]
) -> Rule:
    """`name` must keep its class default unless `applies(config)`: a switch that means nothing without
    another must not be set without it (a run key would then differ for the same model)."""
    return Rule(name, lambda config: applies(config) or getattr(config, name) == default(type(config), name),
                requirement, enabled_by)


@functools.cache
def _defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(cls)}


def default(cls: type, name: str) -> Any:
    """The class default of field `name` (read from the dataclass, without building an instance)."""
    return _defaults(cls)[name]


def check_rules(config: Any, rules: Iterable[Rule]) -> None:
    """Raise ConfigError for the first rule `config` breaks."""
    for rule in rules:
        if not rule.holds(config):
            requirement = rule.requirement(config) if callable(rule.requirement) else rule.requirement
            raise invalid(type(config).__name__, rule.field, getattr(config, rule.field), requirement)


def enabling(rules: Iterable[Rule], name: str) -> dict[str, Any]:
    """The settings under which every rule on field `name` lets it leave its default."""
    settings: dict[str, Any] = {}
    for rule in rules:
        if rule.field == name:
            settings |= rule.enabled_by
    return settings
