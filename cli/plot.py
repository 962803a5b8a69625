"""`harness plot`: draw one figure of a sweep's report into a file for a paper (png, svg or pdf).

matplotlib and seaborn are imported inside the handler so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cli.out_path import check_out_path
from cli.sweep_options import add_sweep_options
from errors import ConfigError, closest

SUFFIXES = (".png", ".svg", ".pdf")
EMA = 0.6  # = analysis.explore.payload.DEFAULT_EMA: light smoothing by default, as in the report


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "plot",
        help="draw one figure of a sweep (curves, lr, attention, logits, spikes, cost, compute, ladder, decisions)",
        description="Write one of the report's figures to a file; the format follows --out's suffix.",
    )
    parser.add_argument("figure", metavar="FIGURE",
                        help="curves, lr, attention, logits, spikes, cost, compute, ladder or decisions")
    add_sweep_options(parser, min_effect=False)
    parser.add_argument("--out", required=True, metavar="FILE", help="output file: .png, .svg or .pdf")
    parser.add_argument("--ema", type=float, default=EMA, metavar="W",
                        help="smooth each run's training loss (curves): weight of the past, 0 <= W < 1 (default: "
                        f"{EMA}; 0: none)")
    parser.add_argument("--log", action="store_true", help="log axes for the loss curves")
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--target-flops", type=float, metavar="X",
                        help="ladder: mark and extrapolate to X training FLOPs (default: 100× the largest rung)")
    target.add_argument("--target-params", type=float, metavar="N",
                        help="ladder: draw loss against parameters, extrapolated to N")
    parser.add_argument("--also", action="append", default=[], metavar="SWEEP",
                        help="decisions: pool the decisions of this ladder sweep too (repeatable), as `harness "
                        "decisions` does")
    parser.set_defaults(handler=run)


def _check_target(args: argparse.Namespace) -> None:
    """A target belongs to the ladder figure, and is a positive number."""
    from cli.compare_ladder import check_targets

    for name in ("target_flops", "target_params"):
        if getattr(args, name) is not None and args.figure != "ladder":
            raise ConfigError(f"--{name.replace('_', '-')} applies to the ladder figure only, not {args.figure!r}.")
    check_targets(args)


def run(args: argparse.Namespace) -> int:
    """Check the figure name, the suffix and --ema before touching the store, then draw and save."""
    from analysis.plots import FIGURES

    if args.figure not in FIGURES:
        hint = closest(args.figure, FIGURES)
        raise ConfigError(f"unknown figure {args.figure!r}; "
                          + (f"did you mean {hint!r}?" if hint else f"figures: {', '.join(FIGURES)}."))
    out = Path(args.out)
    if out.suffix.lower() not in SUFFIXES:
        raise ConfigError(f"--out {args.out!r} must end in {', '.join(SUFFIXES)} (the format follows the suffix).")
    check_out_path("--out", out)
    if not 0 <= args.ema < 1:
        raise ConfigError(f"--ema {args.ema!r} is invalid: the weight of the past must be at least 0 (none) and below "
                          "1.")
    _check_target(args)
    if args.also and args.figure != "decisions":
        raise ConfigError(f"--also applies to the decisions figure only, not {args.figure!r}.")
    plot = _pooled_decisions(args) if args.also else _figure(args)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot.save(out)
    for note in plot.notes:
        print(f"harness plot: {note}", file=sys.stderr)
    print(out)
    return 0


def _figure(args: argparse.Namespace):
    from analysis.plots import FIGURES, make_context
    from analysis.reading.frames import load_sweep

    context = make_context(load_sweep(args.results, args.sweep), args.metric, args.baseline, ema=args.ema, log=args.log,
                           target_flops=args.target_flops, target_params=args.target_params)
    return FIGURES[args.figure](context)


def _pooled_decisions(args: argparse.Namespace):
    """The decisions figure of SWEEP and every --also sweep, their decisions pooled."""
    from analysis.ladder.decision_runs import decision_runs
    from analysis.ladder.decisions import decision_accuracy
    from analysis.plots.decisions import draw

    return draw(decision_accuracy(decision_runs(args.results, [args.sweep, *args.also], args.metric)))
