"""Start-up benchmark: from `harness sweep` to the first training step, and the fixed cost of a launch.

    python benchmarks/bench_start.py [--dir /tmp/bench_start] [--repeats 3] [--workers 2] [--steps 100]
                                     [--no-report] [--tree PATH ...] [--corpus FILE] [--imports ROUNDS]

A 4-cell sweep of `tiny` (2 QK-norm settings × 2 LRs, one seed; 8 × 64 tokens a step) on tinyshakespeare,
whose tokenizer and token cache are built before any clock starts, launched as a user does (`python -m
cli.main sweep … --no-progress`, live report on unless `--no-report`) into a fresh results directory.
Per launch, in seconds from the launch:

    plan       the plan is written (cells.parquet's mtime): CLI start-up, expansion, validation
    claim      the first claim (claim files' claimed_at): the workers are started and have imported
    step 1     the first cell's first optimizer step is done (its first_step_at + step_time of step 1)
    last       the last cell's status is stored
    exit       `harness sweep` returned (closing compaction and final report included)

and the fixed cost = wall − (sum of the cells' own training times, first step to status) / workers.
With several `--tree` (source checkouts, run with PYTHONPATH=tree), launches alternate between them, so a
before/after comparison shares the machine's load; each line carries the 1-minute load average.
`--imports ROUNDS` measures only the imports (CPU and wall of fresh processes): bare torch, torch +
Lightning, and what a worker of each tree imports before it can train.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "tinyshakespeare.txt"

SWEEP = '''
from experiments import Ablation, grid

ablation = Ablation(
    "start", "How soon does a sweep train?", base="tiny",
    grid=grid(qk_norm=["none", "rmsnorm"]), lrs=[1e-3, 3e-3], seeds=1,
    train=dict(steps={steps}, batch_size=8, seq_len=64, warmup_steps=10, val_every={steps}, val_seqs=32,
               probe_every=25, checkpoint_every={steps}),
    data=dict(source={source!r}, cache_dir={cache!r}),
)
'''

PHASES = ("plan", "claim", "step 1", "last", "exit", "fixed")

# What a worker imports before it can train, per tree (before issue 16: experiments/worker.py, no import_training).
# The module is chosen by the tree's files: an editable install of another tree would answer find_spec.
WORKER_IMPORTS = ("import importlib\n"
                  "w = importlib.import_module({module!r})\n"
                  "getattr(w, 'import_training', lambda: __import__('harness.train.run'))()")


def worker_imports(tree: Path) -> str:
    """The code that imports what a worker of `tree` imports before it can train."""
    module = "experiments.workers.worker" if (tree / "experiments" / "workers").is_dir() else "experiments.worker"
    return WORKER_IMPORTS.format(module=module)


IMPORTS = {"torch": "import torch", "torch + lightning.pytorch": "import torch, lightning.pytorch"}


def launch(tree: Path, ablation: Path, results: Path, workers: int, report: bool) -> dict[str, float]:
    """One `harness sweep` into a fresh results directory; its phases in seconds from the launch."""
    shutil.rmtree(results, ignore_errors=True)
    cli = "cli.main" if (tree / "cli" / "main.py").is_file() else "harness.cli.main"  # before issue 16: inside harness
    command = [sys.executable, "-m", cli, "sweep", str(ablation), "--results", str(results),
               "--workers", str(workers), "--no-progress", *([] if report else ["--no-report"])]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.time()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, cwd=tree, env=env)
    ended = time.time()
    return phases(results, started, ended, workers)


def phases(results: Path, started: float, ended: float, workers: int) -> dict[str, float]:
    """The phases of one launch, read from the store and the claim files."""
    import db

    con = db.connect(results)
    rows = con.execute("SELECT run_id, summary, finished_at FROM runs WHERE status = 'completed'").fetchall()
    step_times = dict(con.execute("SELECT run_id, value FROM metrics WHERE name = 'step_time' AND step = 1").fetchall())
    claimed = [json.loads((results / "claims" / run_id / "0").read_text())["claimed_at"] for run_id, _, _ in rows]
    first_steps = {run_id: json.loads(summary)["first_step_at"] for run_id, summary, _ in rows}
    own = [finished.timestamp() - first_steps[run_id] for run_id, _, finished in rows]
    first = min(first_steps, key=lambda run_id: first_steps[run_id])
    return {
        "plan": (results / "sweeps" / "start" / "cells.parquet").stat().st_mtime - started,
        "claim": min(claimed) - started,
        "step 1": first_steps[first] + step_times[first] - started,
        "last": max(finished.timestamp() for _, _, finished in rows) - started,
        "exit": ended - started,
        "fixed": ended - started - sum(own) / workers,
    }


def cpu_and_wall(command: list[str], tree: Path) -> tuple[float, float]:
    """(CPU seconds, user + system, and wall seconds) of one fresh process running `command` in `tree`."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(command, check=True, cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, time.perf_counter() - started


def import_costs(trees: list[Path], rounds: int) -> None:
    """Median CPU and wall seconds of the imports a worker makes before it can train, per tree, and of the bare
    torch and torch + Lightning imports, in `rounds` interleaved rounds."""
    cases = [(name, code, trees[0]) for name, code in IMPORTS.items()]
    cases += [(f"worker imports, tree {i}", worker_imports(tree), tree) for i, tree in enumerate(trees)]
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in cases}
    loads = []
    for _ in range(rounds):
        for name, code, tree in cases:
            loads.append(os.getloadavg()[0])
            seen[name].append(cpu_and_wall([sys.executable, "-c", code], tree))
    for name, values in seen.items():
        cpu, wall = (statistics.median(v[i] for v in values) for i in (0, 1))
        print(f"{name:<28} CPU {cpu:5.2f} s   wall {wall:5.2f} s   (median of {rounds})")
    print(f"load average {min(loads):.2f}–{max(loads):.2f}")


def line(name: str, values: dict[str, float], load: float) -> str:
    return f"{name:<12} " + "  ".join(f"{k} {values[k]:5.2f}" for k in PHASES) + f"   load {load:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_start"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--no-report", action="store_true", help="launch with --no-report")
    parser.add_argument("--tree", type=Path, action="append",
                        help="source checkout to launch (repeatable; default: this one)")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--imports", type=int, metavar="ROUNDS", help="measure only the imports, in ROUNDS rounds")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tree or [ROOT]]
    if args.imports:
        return import_costs(trees, args.imports)
    shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True)
    cache = args.dir / "cache"
    ablation = args.dir / "start.py"
    ablation.write_text(SWEEP.format(steps=args.steps, source=str(args.corpus), cache=str(cache)))

    from harness.config import DataConfig
    from harness.data import prepare

    prepare(DataConfig(source=str(args.corpus), cache_dir=str(cache)), 1024)  # the tiny preset's vocabulary
    print(f"4 cells × {args.steps} steps, {args.workers} workers, report {'off' if args.no_report else 'on'}; "
          f"seconds from the launch")
    measured: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    for repeat in range(args.repeats):
        for i, tree in enumerate(trees):
            load = os.getloadavg()[0]
            values = launch(tree, ablation, args.dir / "results", args.workers, not args.no_report)
            measured[tree].append(values)
            print(line(f"#{repeat + 1} tree {i}", values, load), flush=True)
    for i, tree in enumerate(trees):
        medians = {k: statistics.median(v[k] for v in measured[tree]) for k in PHASES}
        print(line(f"median {i}", medians, os.getloadavg()[0]) + f"   ({tree})")


if __name__ == "__main__":
    main()
