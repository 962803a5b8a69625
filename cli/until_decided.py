"""`harness sweep ABLATION --until-decided [--max-seeds N] [--seed-batch K]`: run the sweep in rounds, and after
each round add K seeds to every (arm, lr) whose comparison with the baseline is still undecided, up to N.

Deciding after every round is peeking, which a fixed-n t-test does not survive (looked at after every seed
up to 20, it found a difference between identical arms in 27% of simulated sweeps); the decision here is the
anytime-valid test of `analysis.sequential` (docs/analysis.md), the one `harness compare --sequential` shows.

A round is an ordinary launch of the sweep (`cli.sweep.sweep`) whose plan keeps, per (arm, lr), the
first seeds of its current count (the baseline at an LR as many as the most its arms there have): the added
seeds are ordinary cells of the plan, and the decisions are a function of the stored results, so the same
command after a crash or a Ctrl-C replays the finished rounds without training and resumes the cells left.
This module is in the CLI layer because it joins experiments (the launch) and analysis (the decision).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace

DEFAULT_MAX_SEEDS = 20  # where the test decides a 1.5-sd difference in ≥ 80% of sweeps (docs/analysis.md)
DEFAULT_SEED_BATCH = 2


def add_options(parser: argparse.ArgumentParser) -> None:
    """The --until-decided options of `harness sweep`."""
    parser.add_argument("--until-decided", action="store_true",
                        help="add seeds in rounds to each (arm, lr) until its difference from the baseline is decided "
                        "by an anytime-valid test (see docs/sweeps.md)")
    parser.add_argument("--max-seeds", type=int, metavar="N",
                        help=f"with --until-decided: at most N seeds per (arm, lr) (default {DEFAULT_MAX_SEEDS})")
    parser.add_argument("--seed-batch", type=int, metavar="K",
                        help=f"with --until-decided: seeds added per round to each undecided (arm, lr) (default {DEFAULT_SEED_BATCH})")
    parser.set_defaults(keep_cells=None)  # a round's plan filter (set by `run`, applied by sweep.plan_sweep)


def requested(args: argparse.Namespace) -> bool:
    """Whether any option of this module was given (so `run` checks them, also when --until-decided is missing)."""
    given = (getattr(args, "max_seeds", None), getattr(args, "seed_batch", None))
    return bool(getattr(args, "until_decided", False)) or any(value is not None for value in given)


def _check_flags(args: argparse.Namespace) -> None:
    from errors import ConfigError

    if not args.until_decided:
        given = "--max-seeds" if args.max_seeds is not None else "--seed-batch"
        raise ConfigError(f"{given} needs --until-decided.")
    if args.seed_batch is not None and args.seed_batch < 1:
        raise ConfigError(f"--seed-batch {args.seed_batch} is invalid: must be ≥ 1.")
    if args.dry_run or args.status:
        raise ConfigError(f"--until-decided and {'--dry-run' if args.dry_run else '--status'}: give one "
                          "(--dry-run and --status show the sweep's current plan without --until-decided).")
    if args.backend != "local":
        raise ConfigError("--until-decided runs its rounds with --backend local.")


def _check_plan(plan, max_seeds: int, seeds: int) -> None:
    from errors import ConfigError

    if plan.studies:
        raise ConfigError(f"ablation {plan.name!r} is a search (tune=): --until-decided adds seeds to a grid's cells, "
                          "and a search has none.")
    if plan.ablation.ladder is not None:
        raise ConfigError(f"ablation {plan.name!r} is a scale ladder: --until-decided adds seeds to a grid's comparisons "
                          "at one scale; give the ladder's rungs their seeds (ladder(seeds=...)) instead.")
    if len(plan.arms) < 2:
        raise ConfigError(f"ablation {plan.name!r} has one arm: there is no comparison with a baseline to decide, "
                          "so no seeds to add.")
    if max_seeds <= seeds:
        raise ConfigError(f"--max-seeds {max_seeds} is invalid: the sweep already has {seeds} seeds, so there are "
                          f"no seeds to add; give more than {seeds}.")


def seed_counts(targets: dict[tuple, int], baseline: str) -> dict[tuple, int]:
    """Seeds per (arm, lr) for a round: each arm's target, and the baseline at an LR the most of its arms
    there (every arm's seeds need the baseline's to pair with)."""
    counts = dict(targets)
    for (_, lr), n in targets.items():
        counts[(baseline, lr)] = max(counts.get((baseline, lr), 0), n)
    return counts


def grow(targets: dict[tuple, int], undecided: list[tuple], batch: int, max_seeds: int) -> dict[tuple, int]:
    """The next round's targets: `batch` more seeds for each undecided (arm, lr), never above `max_seeds`."""
    return {key: min(n + batch, max_seeds) if key in undecided else n for key, n in targets.items()}


def _round_filter(counts: dict[tuple, int], first_seed: int, declared: int):
    """The plan of a round: the cells whose seed index is below their (arm, lr)'s count (the declared seed
    count for a baseline LR no arm is compared at)."""

    def keep(plan):
        cells = tuple(c for c in plan.cells if c.seed - first_seed < counts.get((c.arm, c.lr), declared))
        return replace(plan, cells=cells)

    return keep


def _decisions(results_dir, plan, counts: dict[tuple, int], first_seed: int) -> dict:
    """The anytime-valid decision of every (arm, lr) on this round's seeds only (a store may hold later seeds
    from an earlier invocation: deciding on them would not replay the same rounds)."""
    from analysis.cells import Cells
    from analysis.compare import finished_cells
    from analysis.sequential_table import Decision, sequential_decisions
    from analysis.source import open_sweep
    from analysis.verdict_rules import Verdict

    cells = finished_cells(open_sweep(results_dir, plan.name), baseline=plan.baseline)
    runs = tuple(r for r in cells.runs if r[2] - first_seed < counts.get((r[0], r[1]), 0))
    decided = sequential_decisions(Cells(cells.baseline, runs))
    # an (arm, lr) without a result on the metric (e.g. never validated)
    none = Decision(Verdict.UNDECIDED, None, 0, -math.inf, math.inf, 1.0, 1.0, None)
    return {key: decided.get(key, none) for key in counts if key[0] != plan.baseline}


def _label(key: tuple) -> str:
    arm, lr = key
    return f"{arm} lr={lr:g}"


def run(args: argparse.Namespace) -> int:
    """Validate, then run rounds of the sweep until every (arm, lr) is decided or at --max-seeds; the exit
    code is the last round's (a round that did not finish every cell stops the rounds)."""
    from analysis.verdict_rules import Verdict
    from cli.sweep import plan_sweep, sweep

    _check_flags(args)
    plan, _, results_dir = plan_sweep(args)  # the sweep as declared: every cell validated, nothing written
    seeds = len({c.seed for c in plan.cells})
    max_seeds = args.max_seeds if args.max_seeds is not None else max(DEFAULT_MAX_SEEDS, seeds + 1)
    batch = args.seed_batch or DEFAULT_SEED_BATCH
    _check_plan(plan, max_seeds, seeds)
    first_seed = min(c.seed for c in plan.cells)
    targets = {(c.arm, c.lr): seeds for c in plan.cells if c.arm != plan.baseline}
    for number in range(1, max_seeds + 1):
        counts = seed_counts(targets, plan.baseline)
        added = number > 1  # the first round runs the declared seeds: nothing adaptive yet
        record = {"round": number, "seeds": max(counts.values()), "max_seeds": max_seeds, "seed_batch": batch}
        round_args = argparse.Namespace(**{**vars(args), "until_decided": False, "max_seeds": None, "seed_batch": None,
                                           "seeds": max_seeds, "keep_cells": _round_filter(counts, first_seed, seeds),
                                           "seeding_round": record if added else None})
        print(f"harness sweep: --until-decided round {number}: up to {max(counts.values())} seeds an (arm, lr)", file=sys.stderr)
        code = sweep(round_args)
        if code != 0:
            return code
        decisions = _decisions(results_dir, plan, counts, first_seed)
        undecided = [key for key in targets if decisions[key].verdict == Verdict.UNDECIDED and targets[key] < max_seeds]
        for key in targets:
            test = decisions[key]
            state = (f"{test.verdict} at {test.decided_at} matched seeds" if test.decided_at else
                     f"undecided after {test.n} matched seeds" + ("" if key in undecided else f" (--max-seeds {max_seeds})"))
            print(f"  {_label(key)}: {state}", file=sys.stderr)
        if not undecided:
            left = sum(1 for key in targets if decisions[key].verdict == Verdict.UNDECIDED)
            print(f"harness sweep: --until-decided: {len(targets) - left} of {len(targets)} comparisons decided after "
                  f"{number} rounds" + (f"; {left} undecided at --max-seeds {max_seeds}" if left else ""), file=sys.stderr)
            return 0
        targets = grow(targets, undecided, batch, max_seeds)
    return 0
