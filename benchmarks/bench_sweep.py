"""Sweep benchmarks: a 24-cell tiny sweep with 2 local workers, the fixed cost of a cell in a warm worker,
and `--dry-run` of a 10,800-cell grid.

    python benchmarks/bench_sweep.py [--dir /tmp/bench_sweep] [--steps 150] [--workers 2] [--report]

The 24 cells (2 QK-norm × 2 soft-cap settings × 3 LRs × 2 seeds of `tiny`, 8 × 64 tokens a step) train on
../shared/data/tinyshakespeare.txt, whose tokenizer and token cache are built before the clock starts.
Reported: the sweep's wall time (launch to exit) against the sum of the cells' own training times (first
step to status, from the store) divided by the workers; per cell, claim → first step and status → the same
worker's next claim; what the claim fence's checks cost a cell (from the workers' logs); and the wall time of
`harness sweep … --dry-run` (a fresh process) for 10,800 cells.

`--report` runs the same sweep once more with the live report (the report process rewriting the page after
every finished cell) and reports what it costs the workers (mean training time of a cell, wall time, against
the run without it) and how far the page trails: per cell, the time from its status to the end of the first
rewrite that started after it (from the report log's time stamps and durations; for the last cell that is
the final page, written after the closing compaction).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "tinyshakespeare.txt"

SWEEP = '''
from experiments import Ablation, grid

ablation = Ablation(
    "bench", "How fast is a 24-cell sweep?", base="tiny",
    grid=grid(qk_norm=["none", "rmsnorm"], attn_softcap=[None, 50.0]), lrs=[1e-3, 3e-3, 1e-2], seeds=2,
    train=dict(steps={steps}, batch_size=8, seq_len=64, warmup_steps=10, val_every={steps}, val_seqs=32,
               probe_every=25, checkpoint_every={steps}),
    data=dict(source={source!r}, cache_dir={cache!r}),
)
'''

BIG = '''
from experiments import Ablation, grid

ablation = Ablation(
    "big", "Does a 10,800-cell grid list in under 2 s?", base="tiny",
    grid=grid(d_model=list(range(32, 32 + 16 * 25, 16)), n_layers=[1, 2, 3, 4], mlp=["swiglu", "gelu", "relu", "geglu"],
              qk_norm=["none", "rmsnorm", "layernorm"]),
    lrs=[1e-3, 3e-3, 1e-2], seeds=3,
)
'''


def cell_times(results: Path) -> list[dict]:
    """Per cell: claim time, first step, finish time and worker, from the claims and the store."""
    import db

    con = db.connect(results)
    rows = con.execute("SELECT run_id, summary, finished_at FROM runs "
                       "WHERE status IN ('completed', 'diverged')").fetchall()
    cells = []
    for run_id, summary, finished in rows:
        claim = json.loads((results / "claims" / run_id / "0").read_text())
        cells.append({"run_id": run_id, "worker": claim["worker"], "claimed": claim["claimed_at"],
                      "first_step": json.loads(summary)["first_step_at"], "finished": finished.timestamp()})
    return cells


def fence_costs(results: Path) -> list[tuple[int, float]]:
    """Per finished cell: (fence checks, their milliseconds), from the workers' logs."""
    import re

    logs = "".join(p.read_text() for p in (results / "sweeps" / "bench" / "logs").glob("w*.log"))
    fences = re.findall(r": (?:completed|diverged) \((\d+) fence checks, ([\d.]+) ms\)", logs)
    return [(int(n), float(ms)) for n, ms in fences]


def run_sweep(ablation: Path, results: Path, workers: int, report: bool) -> float:
    """Wall seconds of `harness sweep` from launch to exit (a fresh store)."""
    shutil.rmtree(results, ignore_errors=True)
    command = [sys.executable, "-m", "cli.main", "sweep", str(ablation), "--results", str(results),
               "--workers", str(workers), "--no-progress", *([] if report else ["--no-report"])]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def page_lags(results: Path, cells: list[dict]) -> tuple[int, list[float]]:
    """(rewrites, per cell: seconds from its status until the end of the first rewrite that started after it),
    from the report log."""
    rewrites = []
    for line in (results / "sweeps" / "bench" / "logs" / "report.log").read_text().splitlines():
        stamp, _, rest = line.partition(" report: ")
        if " in " in rest and " s → " in rest:
            ended = datetime.fromisoformat(stamp).timestamp()
            rewrites.append((ended - float(rest.rsplit(" in ", 1)[1].split(" s → ")[0]), ended))
    lags = []
    for cell in cells:
        later = [ended for began, ended in rewrites if began >= cell["finished"]]
        lags.append(min(later) - cell["finished"])
    return len(rewrites), lags


def report_cost(ablation: Path, root: Path, workers: int, wall: float, cells: list[dict]) -> None:
    """The sweep again with the live report, against the run without it (`wall`, `cells`): the workers'
    cost and the page's lag."""
    results = root / "results_report"
    with_wall = run_sweep(ablation, results, workers, report=True)
    with_cells = cell_times(results)
    own, with_own = (statistics.mean(c["finished"] - c["first_step"] for c in group) for group in (cells, with_cells))
    count, lags = page_lags(results, with_cells)
    print(f"without the report: wall {wall:.1f} s, mean cell training {own:.2f} s")
    print(f"with the report:    wall {with_wall:.1f} s, mean cell training {with_own:.2f} s "
          f"({with_own / own - 1:+.1%}); {count} rewrites for {len(with_cells)} cells")
    print(f"page lag after a cell's status: median {statistics.median(lags):.1f} s, max {max(lags):.1f} s")


def print_cell_times(cells: list[dict], workers: int, steps: int, wall: float) -> None:
    """How close the sweep came to its cells' own training time, and the gaps around each claim."""
    own = [c["finished"] - c["first_step"] for c in cells]
    to_first_step = [c["first_step"] - c["claimed"] for c in cells]
    to_next_claim = []
    for worker in {c["worker"] for c in cells}:
        mine = sorted((c for c in cells if c["worker"] == worker), key=lambda c: c["claimed"])
        to_next_claim += [b["claimed"] - a["finished"] for a, b in zip(mine, mine[1:])]
    ideal = sum(own) / workers
    print(f"cells {len(cells)}, workers {workers}, steps {steps}")
    print(f"wall {wall:.1f} s; sum of cells' own training times / workers {ideal:.1f} s; ratio {wall / ideal:.3f} "
          "(target ≤ 1.15)")
    print(f"claim → first step: median {statistics.median(to_first_step):.2f} s, max {max(to_first_step):.2f} s "
          f"(the first cell of each worker includes its torch/Lightning import and data load)")
    warm = sorted(to_first_step)[: len(cells) - workers]
    print(f"claim → first step, warm workers (all but each worker's first cell): median {statistics.median(warm):.2f} "
          f"s, max {max(warm):.2f} s (target ≤ 1)")
    print(f"status → next claim: median {statistics.median(to_next_claim):.2f} s, max {max(to_next_claim):.2f} s "
          "(target ≤ 1)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench_sweep"))
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cells-only", action="store_true", help="skip the 10,800-cell dry run")
    parser.add_argument("--report", action="store_true", help="also measure the live report's cost and lag")
    args = parser.parse_args()
    shutil.rmtree(args.dir, ignore_errors=True)
    args.dir.mkdir(parents=True)
    cache = args.dir / "cache"
    (args.dir / "bench.py").write_text(SWEEP.format(steps=args.steps, source=str(CORPUS), cache=str(cache)))
    (args.dir / "big.py").write_text(BIG)

    from harness.config import DataConfig
    from harness.data import prepare

    prepare(DataConfig(source=str(CORPUS), cache_dir=str(cache)), 1024)  # the tiny preset's vocabulary

    results = args.dir / "results"
    wall = run_sweep(args.dir / "bench.py", results, args.workers, report=False)

    cells = cell_times(results)
    print_cell_times(cells, args.workers, args.steps, wall)

    fence_ms = fence_costs(results)
    print(f"fence checks per cell: median {statistics.median(n for n, _ in fence_ms)}, cost median "
          f"{statistics.median(ms for _, ms in fence_ms):.1f} ms, max {max(ms for _, ms in fence_ms):.1f} ms (target ≤ "
          "50)")

    if not args.cells_only:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cli.main", "sweep", str(args.dir / "big.py"), "--results",
                        str(args.dir / "empty"), "--dry-run"], check=True, stdout=subprocess.DEVNULL)
        print(f"--dry-run of 10,800 cells: {time.perf_counter() - started:.2f} s (target < 2)")
    if args.report:
        report_cost(args.dir / "bench.py", args.dir, args.workers, wall, cells)


if __name__ == "__main__":
    main()
