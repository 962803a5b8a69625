"""`harness sweep ABLATION --until-decided [--max-seeds N] [--seed-batch K]`: run the sweep in rounds, and after
each round add K seeds to every (arm, lr) whose comparison with the baseline is still undecided, up to N.

Deciding after every round is peeking, which a fixed-n t-test does not survive (looked at after every seed
up to 20, it found a difference between identical arms in 27% of simulated sweeps); the decision here is the
anytime-valid test of `analysis.comparison.sequential` (docs/analysis.md), the one `harness compare --sequential` shows.

A round is an ordinary launch of the sweep (`cli.sweep.launch`) whose plan keeps, per (arm, lr), the
first seeds of its current count (the baseline at an LR as many as the most its arms there have): the added
seeds are ordinary cells of the plan, and the decisions are a function of the stored results, so the same
command after a crash or a Ctrl-C replays the finished rounds without training and resumes the cells left.
This module is in the CLI layer because it joins experiments (the launch) and analysis (the decision).
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass, replace
from typing import Mapping

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
                        help="with --until-decided: seeds added per round to each undecided (arm, lr) "
                        f"(default {DEFAULT_SEED_BATCH})")


@dataclass(frozen=True)
class UntilDecided:
    """--until-decided and its bounds, as given (None: not given)."""

    on: bool = False
    max_seeds: int | None = None
    seed_batch: int | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "UntilDecided":
        return cls(args.until_decided, args.max_seeds, args.seed_batch)

    @property
    def requested(self) -> bool:
        """Whether any of these options was given (so `run` checks them, also when --until-decided is missing)."""
        return self.on or self.max_seeds is not None or self.seed_batch is not None


@dataclass(frozen=True)
class SeedRound:
    """One round's plan: per (arm, lr) its first `counts` seeds from `first_seed` (`declared` for a baseline LR no
    arm is compared at); `record` goes to sweep.json's `seeding` when the round adds seeds (None: the first)."""

    counts: Mapping[tuple, int]
    first_seed: int
    declared: int
    record: dict | None = None

    def keep(self, plan):
        """The plan with the cells of this round only."""
        cells = tuple(c for c in plan.cells if c.seed - self.first_seed < self.counts.get((c.arm, c.lr), self.declared))
        return replace(plan, cells=cells)


def _check_flags(request) -> None:
    from errors import ConfigError

    until = request.until
    if not until.on:
        given = "--max-seeds" if until.max_seeds is not None else "--seed-batch"
        raise ConfigError(f"{given} needs --until-decided.")
    if until.seed_batch is not None and until.seed_batch < 1:
        raise ConfigError(f"--seed-batch {until.seed_batch} is invalid: must be ≥ 1.")
    if request.dry_run or request.status:
        raise ConfigError(f"--until-decided and {'--dry-run' if request.dry_run else '--status'}: give one "
                          "(--dry-run and --status show the sweep's current plan without --until-decided).")
    if request.slurm.backend != "local":
        raise ConfigError("--until-decided runs its rounds with --backend local.")


def _check_plan(plan, max_seeds: int, seeds: int) -> None:
    from errors import ConfigError

    if plan.studies:
        raise ConfigError(f"ablation {plan.name!r} is a search (tune=): --until-decided adds seeds to a grid's cells, "
                          "and a search has none.")
    if plan.ablation.ladder is not None:
        raise ConfigError(f"ablation {plan.name!r} is a scale ladder: --until-decided adds seeds to a grid's "
                          "comparisons at one scale; give the ladder's rungs their seeds (ladder(seeds=...)) instead.")
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


def _decisions(results_dir, plan, counts: dict[tuple, int], first_seed: int) -> dict:
    """The anytime-valid decision of every (arm, lr) on this round's seeds only (a store may hold later seeds
    from an earlier invocation: deciding on them would not replay the same rounds)."""
    from analysis.comparison.rules import Verdict
    from analysis.comparison.sequential_table import Decision, sequential_decisions
    from analysis.reading.cells import Cells
    from analysis.reading.finished import finished_cells
    from analysis.reading.source import open_sweep

    cells = finished_cells(open_sweep(results_dir, plan.name), baseline=plan.baseline)
    runs = tuple(r for r in cells.runs if r[2] - first_seed < counts.get((r[0], r[1]), 0))
    decided = sequential_decisions(Cells(cells.baseline, runs))
    # an (arm, lr) without a result on the metric (e.g. never validated)
    none = Decision(Verdict.UNDECIDED, None, 0, -math.inf, math.inf, 1.0, 1.0, None)
    return {key: decided.get(key, none) for key in counts if key[0] != plan.baseline}


def _label(key: tuple) -> str:
    arm, lr = key
    return f"{arm} lr={lr:g}"


def run(request) -> int:
    """Validate, then run rounds of the sweep until every (arm, lr) is decided or at --max-seeds; the exit
    code is the last round's (a round that did not finish every cell stops the rounds). `request`:
    cli.sweep.SweepRequest."""
    from analysis.comparison.rules import Verdict
    from cli.sweep import launch, plan_sweep

    _check_flags(request)
    plan, _, results_dir = plan_sweep(request)  # the sweep as declared: every cell validated, nothing written
    seeds = len({c.seed for c in plan.cells})
    max_seeds = request.until.max_seeds if request.until.max_seeds is not None else max(DEFAULT_MAX_SEEDS, seeds + 1)
    batch = request.until.seed_batch or DEFAULT_SEED_BATCH
    _check_plan(plan, max_seeds, seeds)
    first_seed = min(c.seed for c in plan.cells)
    targets = {(c.arm, c.lr): seeds for c in plan.cells if c.arm != plan.baseline}
    for number in range(1, max_seeds + 1):
        counts = seed_counts(targets, plan.baseline)
        added = number > 1  # the first round runs the declared seeds: nothing adaptive yet
        record = {"round": number, "seeds": max(counts.values()), "max_seeds": max_seeds, "seed_batch": batch}
        seed_round = SeedRound(counts, first_seed, seeds, record if added else None)
        print(f"harness sweep: --until-decided round {number}: up to {max(counts.values())} seeds an (arm, lr)",
              file=sys.stderr)
        code = launch(replace(request, seeds=max_seeds), seed_round)
        if code != 0:
            return code
        decisions = _decisions(results_dir, plan, counts, first_seed)
        undecided = [key for key in targets if decisions[key].verdict == Verdict.UNDECIDED and targets[key] < max_seeds]
        for key in targets:
            test = decisions[key]
            state = (f"{test.verdict} at {test.decided_at} matched seeds" if test.decided_at else
                     f"undecided after {test.n} matched seeds"
                     + ("" if key in undecided else f" (--max-seeds {max_seeds})"))
            print(f"  {_label(key)}: {state}", file=sys.stderr)
        if not undecided:
            left = sum(1 for key in targets if decisions[key].verdict == Verdict.UNDECIDED)
            print(f"harness sweep: --until-decided: {len(targets) - left} of {len(targets)} comparisons decided after "
                  f"{number} rounds" + (f"; {left} undecided at --max-seeds {max_seeds}" if left else ""),
                  file=sys.stderr)
            return 0
        targets = grow(targets, undecided, batch, max_seeds)
    return 0
