"""`HFConfig`: one `config.json` dict read with its family's defaults, and the policy for what we cannot express."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Mapping, NoReturn, overload

from errors import ConfigError

if TYPE_CHECKING:
    from harness.hf.family import Family


@dataclass(frozen=True)
class HFConfig:
    """One config dict with its family's defaults, and the policy for features we cannot express."""

    raw: Mapping[str, Any]
    family: Family
    strict: bool

    def get(self, key: str) -> Any:
        """The value transformers would use: the dict's, else the family config class's default."""
        return self.raw[key] if key in self.raw else self.family.defaults[key]

    # A feature that changes parameters is refused however the config is read: that call never returns.
    @overload
    def refuse(self, feature: str, why: str, changes_params: Literal[True] = ...) -> NoReturn: ...

    @overload
    def refuse(self, feature: str, why: str, changes_params: bool) -> None: ...

    def refuse(self, feature: str, why: str, changes_params: bool = True) -> None:
        """Raise for a feature we cannot express; non-strict reading (parameter counting) skips those that
        change no parameter, such as RoPE scaling."""
        if self.strict or changes_params:
            raise ConfigError(f"Hugging Face {self.family.model_type} config: {feature} is not supported: {why}.")
