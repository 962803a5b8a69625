"""Entry point of the `harness` console script.

Each subcommand lives in its own module under `cli` and exposes `register(subparsers)`; the module
must import nothing heavy at top level (no torch, lightning, duckdb), so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from errors import ConfigError
from harness import __version__

# Subcommand modules, in the order `harness --help` lists them.
COMMANDS = ("presets", "calc", "run", "sample", "ablations", "sweep", "sweeps", "db", "compare", "decisions", "summary",
            "plot", "report", "dashboard", "export")


class OneLineParser(argparse.ArgumentParser):
    """argparse with its usage errors as one line (and a pointer to --help), like every other bad input."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="harness",
        description="The ablation lab for transformer language-model architecture.",
    )
    parser.add_argument("--version", action="version", version=f"harness {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run the chosen subcommand; user errors print one clear line and exit 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 0
    try:
        return int(args.handler(args) or 0)
    except ConfigError as err:
        print(f"harness {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C before training started (training itself stops at a step, cleanly)
        print(f"harness {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
