"""`harness decisions --run`: the decision benchmark in one command, two stages of ordinary sweeps.

1. `harness sweep decisions`: every arm of ablations/decisions.py at the smallest rung and every LR of its grid;
2. each arm's best LR there, by the LR sensitivity's rule (lowest mean ℓ over seeds, a divergence counted as ℓ₀;
   `analysis.signals.sensitivity`), written into one small ablation file per decision, `<results>/decisions/<name>.py`,
   which `harness sweep` then runs: the decision's ladder, each arm at its tuned LR at every rung (its
   smallest-rung cells are the tuning sweep's, adopted by their run keys, not trained again).

Then the decision accuracy of every decision's ladder is printed. Each launch is a plain `harness sweep`, with the
options given after `--`, so the command resumes like any sweep: run it again after a crash or a Ctrl-C and
finished cells are kept; a stage that does not finish (exit code ≠ 0) ends the command with its code. With
`--dry-run` among the sweep options, every launch only lists its cells (stage 2 at the tuned LRs once stage 1
has finished, else at a placeholder LR: the cells' costs do not depend on it), and nothing is written.
This module is in the CLI layer because it joins the library (the ablations), the launch and analysis.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

HEADER = '''"""Written by `harness decisions --run` from the tuning sweep {sweep!r}: each arm's best LR at the
smallest rung (lowest mean ℓ over its seeds, a divergence counted as ℓ₀), carried up the ladder. Rewritten by
every run."""

from ablations.decisions import ladder_ablation

ablation = ladder_ablation({name!r}, {lrs!r})
'''


def _sweep(argv: list[str]) -> int:
    from cli.main import main

    return main(["sweep", *argv])


def tuned_lrs(results_dir, metric: str) -> dict[str, float]:
    """arm → its best LR in the tuning sweep; a warning line for each arm whose best LR is an end of the grid."""
    from ablations.decisions import LRS, SWEEP
    from analysis.reading.frames import load_sweep
    from analysis.signals.sensitivity import lr_sensitivity

    table, _ = lr_sensitivity(load_sweep(results_dir, SWEEP), metric)
    best = {arm: float(lr) for arm, lr in zip(table["arm"], table["best_lr"]) if not math.isnan(lr)}
    for arm, lr in best.items():
        if lr in (min(LRS), max(LRS)):
            print(f"harness decisions: warning: arm {arm!r}'s best LR {lr:g} is an end of the tuned grid "
                  f"({min(LRS):g} … {max(LRS):g}); its true best may lie beyond it.", file=sys.stderr)
    return best


def ladder_files(folder: Path, lrs: dict[str, float]) -> list[Path]:
    """One ablation file per decision in `folder`, each arm at its LR in `lrs` (a missing one: ConfigError)."""
    from ablations.decisions import DECISIONS, SWEEP
    from errors import ConfigError

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for d in DECISIONS:
        missing = [arm for arm in d.arms if arm not in lrs]
        if missing:
            raise ConfigError(f"the tuning sweep {SWEEP!r} has no best LR for arm {missing[0]!r} (decision "
                              f"{d.name!r}): none of its runs there has an outcome.")
        path = folder / f"{d.name}.py"
        path.write_text(HEADER.format(sweep=SWEEP, name=d.name, lrs={arm: lrs[arm] for arm in d.arms}))
        paths.append(path)
    return paths


def _stage_two_lrs(results_dir, metric: str, dry_run: bool) -> dict[str, float]:
    """The tuned LRs, or for a dry run before the tuning sweep has finished the middle of the grid for every arm."""
    from ablations.decisions import LRS, arm_points

    if dry_run and not _tuned(results_dir):
        print("harness decisions: the tuning sweep has not finished: the ladders are listed at a placeholder LR.",
              file=sys.stderr)
        return dict.fromkeys(arm_points(), LRS[len(LRS) // 2])
    return tuned_lrs(results_dir, metric)


def _tuned(results_dir) -> bool:
    """Whether the tuning sweep is in the store with every cell finished."""
    import db
    from ablations.decisions import SWEEP
    from analysis.reading.source import open_sweep

    if db.read_sweep_meta(results_dir, SWEEP) is None:
        return False
    info = open_sweep(results_dir, SWEEP).info
    return not info.running and info.n_done > 0


OWN_OPTIONS = ("--results", "--name")  # the benchmark names its sweeps and gives every launch its --results


def run_benchmark(args: argparse.Namespace, analyse) -> int:
    """Stage 1, the tuned LRs, stage 2 (one launch per decision), then `analyse(the decisions' sweeps)`."""
    import db
    from ablations.decisions import DECISIONS, SWEEP
    from errors import ConfigError

    given = [option for option in args.sweeps if option.split("=", 1)[0] in OWN_OPTIONS]
    if given:
        raise ConfigError(f"{given[0].split('=', 1)[0]} after `--` is not for the benchmark's sweeps: give --results "
                          "before `--`; the sweeps are named decisions and decisions.<decision>.")

    results_dir = Path(db.resolve_results_dir(args.results))
    options = ["--results", str(results_dir), *(["--set", f"source={args.data}"] if args.data else []), *args.sweeps]
    dry_run = "--dry-run" in args.sweeps
    code = _sweep([SWEEP, *options])
    if code != 0:
        return code
    lrs = _stage_two_lrs(results_dir, args.metric, dry_run)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) if dry_run else results_dir / "decisions"
        for path in ladder_files(folder, lrs):
            code = _sweep([str(path), *options])
            if code != 0:
                return code
    return 0 if dry_run else analyse([d.sweep for d in DECISIONS])
