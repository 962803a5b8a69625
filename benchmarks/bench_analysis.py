"""Analysis benchmark: `harness report` and `harness compare` on a 200-run synthetic sweep with full histories.

    python benchmarks/bench_analysis.py [--arms 5 --lrs 4 --seeds 10 --steps 1000 --repeats 3]
                                        [--dir /tmp/bench_analysis [--reuse]]
                                        [--floor N]

Writes arms × lrs × seeds runs through the real `db.RunWriter` (tests/analysis/synthetic.py: every step logs
train loss, grad norm, lr, tokens and step time; validation and probes — 4 layers × 4 heads of attention
logits, output-logit signals — every 50 steps; planted effects, a few divergences and spikes) plus the
sweep's plan (`db.write_sweep`), then times both commands end to end in fresh processes (Python start-up,
imports, connect, analysis, output), before and after `harness db compact`.

`--floor N` then times `harness compare` N more times, each next to a bare `python -c "from scipy import
stats"`: the import that `harness compare` cannot avoid (it computes with scipy.stats, and reads the store in
a forked child meanwhile), so the difference is what the command adds to it.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import db

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analysis"))
import synthetic  # noqa: E402

SWEEP = "bench"


def generate(results: Path, arms: int, lrs: int, seeds: int, steps: int) -> int:
    """The sweep's runs and plan; returns the number of metric rows."""
    names = ["baseline"] + [f"arm{i}" for i in range(1, arms)]
    planted = {name: (-0.02 * i, 0.01, seeds) for i, name in enumerate(names)}
    grid = [1e-3 * 3**i for i in range(lrs)]
    top = grid[-1]
    diverged = {(name, top, seed): steps // 2 for name in names[::2] for seed in range(0, seeds, 3)}
    synthetic.write_planted(
        results, SWEEP, planted, lrs=grid, lr_penalty=lambda lr: 0.1 * abs(grid.index(lr) - 1), diverged=diverged,
        steps=steps, val_every=50, probe_every=50, layers=4, heads=4, spikes=(steps // 3,), logit_growth=8.0,
    )
    cells = [{"arm": name, "lr": lr, "seed": seed, "run_id": f"{SWEEP}-{i}-{lr}-{seed}"}
             for i, name in enumerate(names) for lr in grid for seed in range(seeds)]
    db.write_sweep(results, SWEEP,
                   {"question": "Which arm wins, and at which LR?", "baseline": "baseline", "axes": ["arm"]}, cells)
    return db.connect(results).execute("SELECT count(*) FROM metrics").fetchone()[0]


def seconds(command: list[str]) -> float:
    """Wall seconds of `command` in a fresh process."""
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def timed(command: list[str], repeats: int) -> str:
    """Wall and CPU (user + system, all threads) seconds of `command` in fresh processes, one pair per repeat.

    On a shared machine wall time includes waiting for a core; CPU time is what the command itself costs."""
    pairs = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = seconds(command)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        pairs.append(f"{wall:.2f} wall / {cpu:.2f} CPU")
    return ", ".join(pairs) + " s"


def floor(compare: list[str], repeats: int) -> None:
    """`compare` against the bare scipy.stats import, interleaved so both see the same machine."""
    pairs = [(seconds(compare), seconds([sys.executable, "-c", "from scipy import stats"])) for _ in range(repeats)]
    for name, values in (("harness compare", [a for a, _ in pairs]),
                         ("python -c 'from scipy import stats'", [b for _, b in pairs])):
        print(f"{name}: median {statistics.median(values):.2f} s, {min(values):.2f}–{max(values):.2f} s, "
              f"{sum(v < 2 for v in values)} of {len(values)} under 2 s")
    print(f"harness compare − the scipy.stats import: median {statistics.median(a - b for a, b in pairs):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--lrs", type=int, default=4)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", help="keep the store here (default: a temporary directory, removed after)")
    parser.add_argument("--reuse", action="store_true", help="time the store already in --dir instead of writing one")
    parser.add_argument("--floor", type=int, default=0, metavar="N",
                        help="then N runs of compare beside the bare scipy.stats import")
    args = parser.parse_args()
    root = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="bench_analysis-"))
    results = root / "results"
    try:
        if not args.reuse:
            shutil.rmtree(results, ignore_errors=True)
            start = time.perf_counter()
            rows = generate(results, args.arms, args.lrs, args.seeds, args.steps)
            runs = args.arms * args.lrs * args.seeds
            print(f"generate {runs} runs × {args.steps} steps ({rows:,} metric rows) through db.RunWriter: "
                  f"{time.perf_counter() - start:.1f} s")
        harness = [sys.executable, "-m", "cli.main"]
        for stage in ("as found (--reuse)" if args.reuse else "before compact", "after compact"):
            if stage == "after compact":
                subprocess.run([*harness, "db", "compact", "--results", str(results)], check=True, capture_output=True)
            report = timed([*harness, "report", SWEEP, "--results", str(results)], args.repeats)
            compare = timed([*harness, "compare", SWEEP, "--results", str(results)], args.repeats)
            print(f"-- {stage}")
            print(f"harness report {SWEEP} (fresh process): {report}")
            print(f"harness compare {SWEEP} (fresh process): {compare}")
        if args.floor:
            floor([*harness, "compare", SWEEP, "--results", str(results)], args.floor)
        page = db.sweep_dir(results, SWEEP) / "report.html"
        print(f"report.html: {page.stat().st_size / 1e6:.2f} MB; load average {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores")
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
