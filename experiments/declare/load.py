"""Finding the `Ablation` a user names: a module of the `ablations/` library, or a path to a .py file."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from errors import ConfigError, closest
from experiments.declare.ablation import Ablation
from harness.config.python_file import run_python_file


def library_names() -> list[str]:
    """The modules of the `ablations` package, one research question each."""
    import ablations

    return sorted(m.name for m in pkgutil.iter_modules(ablations.__path__) if not m.name.startswith("_"))


def _the_ablation(namespace: dict, where: str) -> Ablation:
    found = [value for value in namespace.values() if isinstance(value, Ablation)]
    if "ablation" in namespace and isinstance(namespace["ablation"], Ablation):
        return namespace["ablation"]
    if len(found) != 1:
        what = "no Ablation" if not found else f"{len(found)} Ablations ({', '.join(a.name for a in found)})"
        raise ConfigError(f"{where} defines {what}; define exactly one (or name the one to run `ablation`).")
    return found[0]


def _run_file(path: Path) -> dict:
    try:
        return run_python_file(path, str(path))
    except ConfigError as err:
        message = str(err)
        raise ConfigError(message if message.startswith(str(path)) else f"{path}: {message}") from None


def load_ablation(name_or_path: str) -> tuple[Ablation, str]:
    """(the Ablation, where it came from). A name that is neither a library module nor a file gets the
    closest library name as a hint."""
    path = Path(name_or_path)
    if name_or_path.endswith(".py"):
        if not path.is_file():
            raise ConfigError(f"no such ablation file {name_or_path!r}.")
        return _the_ablation(_run_file(path), str(path)), str(path)
    names = library_names()
    if name_or_path not in names and path.exists():
        raise ConfigError(f"{name_or_path!r} is not an ablation: an ablation is a .py file defining one Ablation, or a "
                          f"name from the library ({', '.join(names)}).")
    if name_or_path not in names:
        hint = closest(name_or_path, names)
        raise ConfigError(
            f"no ablation {name_or_path!r} in the library" + (f"; did you mean {hint!r}?" if hint else ".")
            + f" Library: {', '.join(names)} (or give a path to a .py file defining one Ablation)."
        )
    try:
        module = importlib.import_module(f"ablations.{name_or_path}")
    except ConfigError as err:
        raise ConfigError(f"ablations/{name_or_path}.py: {err}") from None
    return _the_ablation(vars(module), f"ablations/{name_or_path}.py"), f"ablations.{name_or_path}"
