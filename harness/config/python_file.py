"""Running a user's Python file (a config file of `harness run`, an ablation file of `harness sweep`) so that
an error inside it is one line that says where, not a traceback through the harness. Torch-free."""

from __future__ import annotations

import runpy
import traceback
from pathlib import Path
from typing import Any

from errors import ConfigError


def run_python_file(path: Path, label: str) -> dict[str, Any]:
    """The file's namespace; an error inside it (syntax, a raise) becomes one ConfigError line, starting with
    `label`, with its line number. A file whose name does not end in .py is refused unread (a config or ablation
    given by mistake, say /etc/hostname, would otherwise fail on its first word as a Python NameError)."""
    if Path(path).suffix != ".py":
        raise ConfigError(f"{label} is not a Python file (its name does not end in .py).")
    try:
        return runpy.run_path(str(path))
    except ConfigError:
        raise  # a config built in the file was invalid: the message already names field and value
    except SyntaxError as err:
        where = f" line {err.lineno}" if err.lineno else " (is it a Python text file?)"
        raise ConfigError(f"{label}{where}: SyntaxError: {err.msg}.") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{label}: not a UTF-8 Python text file ({err.reason} at byte {err.start}).") from None
    except Exception as err:
        in_file = [frame for frame in traceback.extract_tb(err.__traceback__) if frame.filename == str(path)]
        where = f" line {in_file[-1].lineno}" if in_file else ""
        raise ConfigError(f"{label}{where}: {type(err).__name__}: {err}") from None
