"""What the damage checks of issue 24 cost: `harness db check` over a large store, and the CRC check that
`load_checkpoint` now runs before torch.load.

    python benchmarks/bench_damage.py check      [--runs 1000 --rows-per-run 10000 --dir /tmp/bench_damage]
    python benchmarks/bench_damage.py checkpoint [--megabytes 256]

`check` writes the synthetic store of bench_db.py (one metrics shard per run, a manifest and a status), compacts it
(so it has its index) and times `harness db check` end to end. `checkpoint` saves a checkpoint of one float32
tensor and times `db.validate.checkpoint_problem` (every zip member against its CRC-32) beside torch.load, memory
mapped (what `load_checkpoint` does) and not.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # bench_db's store generator

from bench_db import generate  # noqa: E402

from db.compact import compact  # noqa: E402
from db.validate import checkpoint_problem  # noqa: E402


def _timed(label: str, work) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    work()
    print(f"{label}: wall {time.perf_counter() - start:.3f} s, CPU (this process) {time.process_time() - cpu:.3f} s")


def bench_check(root: Path, runs: int, rows_per_run: int) -> None:
    shutil.rmtree(root, ignore_errors=True)
    generate(root, runs, rows_per_run, 1)
    compact(root)
    for _ in range(2):
        start = time.perf_counter()
        done = subprocess.run(["harness", "db", "check", "--results", str(root)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        print(f"harness db check (fresh process): {time.perf_counter() - start:.3f} s: {done.stdout.strip()}")


def bench_checkpoint(megabytes: int) -> None:
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "last.ckpt"
        torch.save({"w": torch.zeros(megabytes * 2**20 // 4)}, path)
        for _ in range(2):
            _timed(f"checkpoint_problem ({megabytes} MB)", lambda: checkpoint_problem(path))
            _timed("torch.load, mmap", lambda: torch.load(path, weights_only=True, mmap=True))
            _timed("torch.load", lambda: torch.load(path, weights_only=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("check", "checkpoint"))
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rows-per-run", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench_damage")
    parser.add_argument("--megabytes", type=int, default=256)
    args = parser.parse_args()
    if args.what == "check":
        bench_check(args.dir, args.runs, args.rows_per_run)
    else:
        bench_checkpoint(args.megabytes)


if __name__ == "__main__":
    main()
