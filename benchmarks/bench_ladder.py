"""Ladder benchmark: what `harness compare --ladder`, `harness plot ladder` and a ladder's report cost.

    python benchmarks/bench_ladder.py [--arms 4 --rungs 5 --seeds 3 --lrs 2 --repeats 3]
                                      [--dir /tmp/bench_ladder [--reuse]]

Writes a ladder through the real `db.RunWriter` (tests/analysis/ladder_synthetic.py: arms × rungs × LRs × seeds
runs from planted curves), then times each command end to end in fresh processes (start-up, imports, the store,
the fits: per arm one from 9 starts and `analysis.ladder.fits.REPLICATES` bootstrap refits, on one axis for
compare and plot, on compute and parameters for the report), and the fits alone in this process.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analysis"))
import ladder_synthetic  # noqa: E402

SWEEP = "bench_ladder"


def write(results: Path, arms: int, rungs: int, seeds: int, lrs: int) -> None:
    """Arms whose curves differ a little in E and α, at rungs of 2× parameters."""
    curves = {f"arm{i}": (2.0 - 0.02 * i, 60.0 + 10 * i, 0.14 + 0.005 * i) for i in range(arms)}
    ladder_synthetic.write_ladder(results, SWEEP, curves, ladder_synthetic.chinchilla_rungs(rungs), seeds=seeds,
                                  lrs=tuple(1e-3 * 3 ** i for i in range(lrs)))


def timed(command: list[str], repeats: int) -> list[float]:
    """Wall seconds of each of `repeats` runs of `command` in a fresh process."""
    found = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        found.append(time.perf_counter() - start)
    return found


def fits_alone(results: Path) -> float:
    """Seconds of `analyse_ladder` on compute alone, the store already read."""
    from analysis.ladder.analyse import analyse_ladder
    from analysis.reading.frames import load_sweep

    sweep = load_sweep(results, SWEEP)
    start = time.perf_counter()
    analyse_ladder(sweep, "final_val_loss", axes=())
    return time.perf_counter() - start


def main() -> None:
    """Write (or reuse) the ladder, then time each command and the fits."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name, default in (("arms", 4), ("rungs", 5), ("seeds", 3), ("lrs", 2), ("repeats", 3)):
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--dir", default="/tmp/bench_ladder")
    parser.add_argument("--reuse", action="store_true", help="keep the store in --dir if it is there")
    args = parser.parse_args()
    results = Path(args.dir) / "results"
    if not (args.reuse and results.is_dir()):
        shutil.rmtree(args.dir, ignore_errors=True)
        start = time.perf_counter()
        write(results, args.arms, args.rungs, args.seeds, args.lrs)
        print(f"wrote {args.arms * args.rungs * args.seeds * args.lrs} runs in {time.perf_counter() - start:.1f} s")
    harness = [sys.executable, "-m", "cli.main"]
    commands = {
        "compare --ladder": [*harness, "compare", SWEEP, "--ladder", "--results", str(results)],
        "plot ladder": [*harness, "plot", "ladder", SWEEP, "--out", str(Path(args.dir) / "ladder.png"), "--results",
                        str(results)],
        "report": [*harness, "report", SWEEP, "--out", str(Path(args.dir) / "report.html"), "--results", str(results)],
        "compare (plain)": [*harness, "compare", SWEEP, "--results", str(results)],
    }
    for name, command in commands.items():
        found = timed(command, args.repeats)
        print(f"{name}: median {statistics.median(found):.2f} s (" + ", ".join(f"{s:.2f}" for s in found) + ")")
    print(f"fits on compute alone (analyse_ladder, this process): {fits_alone(results):.2f} s")


if __name__ == "__main__":
    main()
