"""`harness presets`: the named model configs with their size, counted analytically (no torch import)."""

from __future__ import annotations

import argparse

from cli.output import print_result
from cli.table import render_table
from harness import calc
from harness.config.model import ModelConfig
from harness.presets import PRESETS

HEADERS = ("preset", "params", "non-embedding", "d_model", "layers", "heads/kv", "head_dim", "mlp", "norm")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "presets",
        help="list the preset model configs with their parameter counts",
        description="The presets `--preset NAME` accepts (harness/presets.py), sized by harness calc.",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Print one row per preset."""
    print_result(render_table(HEADERS, [_row(name, make()) for name, make in PRESETS.items()]))
    return 0


def _row(name: str, cfg: ModelConfig) -> tuple:
    mlp = f"{cfg.mlp} ×{cfg.n_experts} top-{cfg.moe_top_k}" if cfg.is_moe else cfg.mlp
    return (
        name, calc.params(cfg), calc.non_embedding_params(cfg), cfg.d_model, cfg.n_layers,
        f"{cfg.n_heads}/{cfg.n_kv_heads}", cfg.head_dim, f"{mlp} {cfg.d_ff}", f"{cfg.norm} {cfg.norm_position}",
    )
