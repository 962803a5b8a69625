"""Decision benchmark analysis: what `harness decisions` and `harness plot decisions` cost on a benchmark-sized store.

    python benchmarks/bench_decisions.py [--decisions 12 --rungs 4 --seeds 3 --repeats 3]
                                         [--dir /tmp/bench_decisions [--reuse]]

Writes one two-arm ladder sweep per decision through the real `db.RunWriter` (tests/analysis/decisions_synthetic.py:
planted differences, some flipping between rungs), then times each command end to end in fresh processes, wall
and CPU (user + system of the child), and prints the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analysis"))
import decisions_synthetic  # noqa: E402
import ladder_synthetic  # noqa: E402


def write(results: Path, decisions: int, rungs: int, seeds: int) -> list[str]:
    """One sweep per decision; the k-th flips at rung k % rungs (0: never)."""
    names = []
    for k in range(decisions):
        flip = k % rungs
        gaps = [0.03 if r < flip else -0.03 for r in range(rungs)]
        ladder = ladder_synthetic.chinchilla_rungs(rungs)
        decisions_synthetic.write_decision(results, f"d{k}", gaps, ladder, seeds=seeds, rng_seed=k)
        names.append(f"d{k}")
    return names


def timed(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one command."""
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - start, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=12)
    parser.add_argument("--rungs", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_decisions"))
    parser.add_argument("--reuse", action="store_true", help="keep the store of an earlier run")
    args = parser.parse_args()
    results = args.dir / "results"
    if not args.reuse:
        shutil.rmtree(args.dir, ignore_errors=True)
    names = write(results, args.decisions, args.rungs, args.seeds) if not results.exists() else \
        [f"d{k}" for k in range(args.decisions)]
    harness = [sys.executable, "-m", "cli.main"]
    also = [arg for name in names[1:] for arg in ("--also", name)]
    commands = {"harness decisions": [*harness, "decisions", *names, "--results", str(results)],
                "harness plot decisions": [*harness, "plot", "decisions", names[0], *also, "--results", str(results),
                                           "--out", str(args.dir / "decisions.png")]}
    print(f"{args.decisions} decisions × {args.rungs} rungs × {args.seeds} seeds; load {os.getloadavg()[0]:.1f}")
    for label, argv in commands.items():
        runs = [timed(argv) for _ in range(args.repeats)]
        print(f"{label}: wall median {statistics.median(w for w, _ in runs):.2f} s "
              f"({', '.join(f'{w:.2f}' for w, _ in runs)}); CPU median {statistics.median(c for _, c in runs):.2f} s")
    print(f"load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
