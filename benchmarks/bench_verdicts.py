"""Verdict error rates measured through `harness compare` on stores written with the project's writer.

    python benchmarks/bench_verdicts.py [--sweeps 1000] [--workers 2] [--scenario NAME ...] [--root /dev/shm/...]

Each scenario (tests/analysis/simulations.py builds its planted outcomes, a known truth) is written sweep by
sweep into a fresh results store with `db.RunWriter` (tests/analysis/simulated_store.py), read back by
`harness compare SWEEP --sequential --format json` in the worker process, and its fixed-n `verdict` and
anytime-valid `seq_verdict` counted. The vectorized verdicts of the same outcomes are computed beside them, and
the script fails if the two ever differ. Stores go under a tmpfs by default (the writer fsyncs every shard; on a
RAM disk that costs nothing) and each is deleted once read. Prints one line per scenario for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from analysis.comparison.rules import Verdict

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "analysis"))
import simulations  # noqa: E402
from simulated_store import compare_sweep, write_table  # noqa: E402

PAIRED_SD = 0.01 * np.sqrt(2)  # run noise 0.01 on each side


def scenarios(sweeps: int) -> dict:
    """name → (arm [sweeps, rows, seeds], baseline, LRs per arm, what is counted, the false or true verdict)."""
    rng = np.random.default_rng(23)
    found = {}
    for seeds in (20, 40):
        arm, base = simulations.survivorship_null(rng, sweeps, seeds=seeds, noise=0.01)
        found[f"survivorship-{seeds}"] = (arm[:, None], base[:, None], 1, "better", "≤ 5%")
    arm, base = simulations.worst_seed_divergences(rng, sweeps, seeds=20)
    found["worst-seeds-20"] = (arm[:, None], base[:, None], 1, "better", "≤ 5%")
    arm, base = simulations.null_table(rng, sweeps, seeds=20)
    found["nine-row-null-20"] = (arm, base, 3, "some row better or worse", "≤ 5%")
    arm, base = simulations.null_table(rng, sweeps, seeds=20, shift=-1.5 * PAIRED_SD)
    found["planted-1.5sd-20"] = (arm, base, 3, "planted row better", "≥ 80%")
    return found


def _count(verdicts: np.ndarray, counted: str) -> np.ndarray:
    if counted == "some row better or worse":
        return np.asarray(np.isin(verdicts, [Verdict.BETTER, Verdict.WORSE]).any(axis=-1))  # verdicts are 3-D
    return verdicts[..., 0] == Verdict.BETTER


def run_chunk(job: tuple) -> tuple[list, list]:
    """Write and compare sweeps `indices` of one scenario; (fixed, sequential) verdicts per sweep [rows]."""
    root, name, arm, base, lrs, indices = job
    fixed, sequential = [], []
    for k in indices:
        store = Path(tempfile.mkdtemp(prefix=f"{name}-{k}-", dir=root))
        keys = write_table(store, "s", arm[k], base[k][:lrs], lrs=lrs)
        rows = compare_sweep(store, "s")
        fixed.append([rows[key]["verdict"] for key in keys])
        sequential.append([rows[key]["seq_verdict"] for key in keys])
        shutil.rmtree(store)
    return fixed, sequential


def measure(name: str, spec: tuple, workers: int, root: str) -> str:
    arm, base, lrs, counted, target = spec
    started = time.time()
    chunks = [(root, name, arm, base, lrs, indices) for indices in np.array_split(np.arange(len(arm)), workers * 4)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        parts = pool.map(run_chunk, chunks)
    fixed = np.array([row for part, _ in parts for row in part], dtype=object)
    sequential = np.array([row for _, part in parts for row in part], dtype=object)
    if not (np.array_equal(fixed, simulations.decide_table(arm, base)) and
            np.array_equal(sequential, simulations.decide_sequential(arm, base))):
        raise SystemExit(f"{name}: harness compare and the vectorized verdicts differ")
    return (f"{name}: {len(arm)} sweeps of {arm.shape[1]} row(s) × {arm.shape[2]} seeds; {counted} (target {target}): "
            f"fixed-n {_count(fixed, counted).mean():.3f}, anytime-valid {_count(sequential, counted).mean():.3f}; "
            f"{time.time() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scenario", nargs="*", help="run only these (default: all)")
    parser.add_argument("--root", default="/dev/shm" if Path("/dev/shm").is_dir() else None,
                        help="where the temporary stores go (default: /dev/shm)")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="bench_verdicts-", dir=args.root)
    try:
        for name, spec in scenarios(args.sweeps).items():
            if not args.scenario or name in args.scenario:
                print(measure(name, spec, args.workers, root), flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
