"""`harness calc`: parameters, FLOPs per token and KV-cache bytes of a preset or a Hugging Face config.json,
optionally resized to a target parameter count. Torch-free: nothing is built."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from cli.output import print_result
from cli.table import render_table
from errors import ConfigError
from harness import calc
from harness.config.model import ModelConfig
from harness.config.run_configs import parse_overrides


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "calc",
        help="parameters, FLOPs/token and KV-cache bytes of a config, without building it",
        description="Count a model analytically (see docs/calc.md for the formulas and conventions).",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", metavar="NAME", help="a preset from `harness presets`")
    source.add_argument("--hf-config", metavar="CONFIG_JSON", type=Path, help="a Hugging Face config.json")
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE",
        help="change a ModelConfig field (repeatable), e.g. --set n_layers=12",
    )
    parser.add_argument("--seq-len", metavar="T", help="context for the attention FLOPs (default: max_seq_len)")
    parser.add_argument("--kv-dtype", default="bf16", choices=sorted(calc.BYTES_PER_ELEMENT),
                        help="KV-cache element type")
    parser.add_argument("--iso-params", metavar="N", help="resize the config to about N parameters (e.g. 25e6)")
    parser.add_argument("--solve", choices=calc.SOLVABLE_FIELDS, help="the field --iso-params changes (default: d_ff)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Resolve the config, optionally solve for the target size, print the figures."""
    if args.solve is not None and args.iso_params is None:
        raise ConfigError(f"--solve {args.solve} needs --iso-params N: it names the field resized to N parameters.")
    cfg = _config(args)
    report = {}
    if args.iso_params is not None:
        solve = args.solve or "d_ff"
        target = _count_option("iso_params", args.iso_params)
        cfg, residual = _solve(cfg, target, solve)
        report["iso_param"] = {"solve": solve, solve: getattr(cfg, solve), "target": target, "residual": residual}
    seq_len = None if args.seq_len is None else _count_option("seq_len", args.seq_len)
    report = {**calc.summary(cfg, seq_len, args.kv_dtype), **report, "config": cfg.to_dict()}
    print_result(json.dumps(report, indent=2) if args.json else _table(report))
    return 0


def _solve(cfg: ModelConfig, target: int, solve: str) -> tuple[ModelConfig, int]:
    """`calc.iso_param`, refusing a target below the smallest config the solved field can give: the solver
    would return that config with a residual larger than the target itself."""
    smallest, _ = calc.iso_param(cfg, 1, solve=solve)
    if calc.params(smallest) > target:
        raise ConfigError(
            f"--iso-params {target:,} is unreachable by solving {solve}: the smallest {solve} "
            f"({getattr(smallest, solve):,}) already gives {calc.params(smallest):,} parameters; shrink the other "
            f"fields (--set vocab_size=…, n_layers=…) or aim higher."
        )
    return calc.iso_param(cfg, target, solve=solve)


def _config(args: argparse.Namespace) -> ModelConfig:
    overrides = parse_overrides(args.overrides, (ModelConfig,))
    if args.preset is not None:
        from harness.presets import from_name

        return from_name(args.preset, **overrides)
    from harness.hf.config import model_config_from_hf

    # Counting needs only the shapes, so features that change the forward pass but no parameter pass.
    return model_config_from_hf(_read_json(args.hf_config), strict=False).replace(**overrides)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except OSError as err:
        raise ConfigError(f"--hf-config {str(path)!r}: cannot read it ({err.strerror}).") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"--hf-config {str(path)!r}: not valid JSON ({err}).") from None


def _count_option(name: str, text: str) -> int:
    """A positive integer option; '25e6' and '25_000_000' are accepted."""
    try:
        value: float = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
    if not (math.isfinite(value) and value == int(value) and value >= 1):
        raise ConfigError(f"--{name.replace('_', '-')}={text!r} is invalid: must be a positive integer, e.g. 25000000 "
                          "or 25e6.")
    return int(value)


def _table(report: dict) -> str:
    per_layer = report["per_layer_params"]
    layers = (f"{per_layer[0]:,} (each of {len(per_layer)})" if len(set(per_layer)) == 1
              else ", ".join(f"{p:,}" for p in per_layer))
    rows = [
        ("params", f"{report['params']:,}"),
        ("non-embedding params", f"{report['non_embedding_params']:,}"),
        ("per-layer params", layers),
        ("FLOPs/token (fwd+bwd)", f"{report['flops_per_token']:,} (at seq_len {report['seq_len']:,})"),
        ("KV cache bytes/token", f"{report['kv_cache_bytes_per_token']:,} ({report['kv_dtype']})"),
    ]
    if report["kernel_flops_per_token"] != report["flops_per_token"]:  # windowed layers: see docs/calc.md
        rows.insert(4,
                    ("FLOPs/token, full-T kernel",
                     f"{report['kernel_flops_per_token']:,} (windows masked, not skipped)"))
        rows.append(("KV cache bytes at seq_len", f"{report['kv_cache_bytes']:,} (windowed layers keep window - 1)"))
    if "iso_param" in report:
        iso = report["iso_param"]
        rows.append((f"solved {iso['solve']}", f"{iso[iso['solve']]:,} (target {iso['target']:,}, residual "
                     f"{iso['residual']:+,})"))
    return render_table(("quantity", "value"), rows)
