"""Submission-to-first-step latency of `harness sweep --backend slurm` on a one-node SLURM started here
(tests/experiments/slurm_cluster.py: Debian's slurmctld/slurmd/munge, installed when missing).

A one-cell sweep checkpoints every step, so the first checkpoint's mtime is when step 1 finished. Printed
per repeat: when `harness sweep` returned with the job id, when the task started (submitit's first log line),
when the worker began its cell (plan read, torch and Lightning imported), and when step 1 was done, each in
seconds from the moment `harness sweep` was started.

    python benchmarks/bench_slurm.py --repeats 3
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "experiments"))

from slurm_cluster import SlurmCluster  # noqa: E402  (the test suite's cluster, so both measure the same setup)

ABLATION = '''
from experiments import Ablation, grid

ablation = Ablation("latency{i}", "How long from submission to the first step?", base="tiny",
                    train=dict(steps=3, batch_size=4, seq_len=32, warmup_steps=1, val_every=3, val_seqs=4,
                               probe_every=10, probe_seqs=2, checkpoint_every=1),
                    data=dict(source={source!r}, cache_dir={cache!r}, val_tokens=4096))
'''


def _corpus(folder: Path) -> Path:
    import pydoc_data.topics

    path = folder / "reference.txt"
    path.write_text("\n\n".join(t.strip() for t in list(pydoc_data.topics.topics.values())[:200]) + "\n")
    return path


def _log_time(text: str, pattern: str) -> float:
    """Epoch seconds of the first log line matching `pattern` (submitit's 'YYYY-mm-dd HH:MM:SS,mmm' or the
    worker's 'HH:MM:SS' of today)."""
    for line in text.splitlines():
        if re.search(pattern, line):
            stamp = re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}", line)
            if stamp:
                return datetime.strptime(stamp.group(0), "%Y-%m-%d %H:%M:%S,%f").timestamp()
            clock = re.match(r"(\d\d):(\d\d):(\d\d) ", line)
            if clock:
                today = datetime.now().replace(hour=int(clock[1]), minute=int(clock[2]), second=int(clock[3]),
                                               microsecond=0)
                return today.timestamp()
    raise RuntimeError(f"no timed log line matches {pattern!r}:\n{text[-2000:]}")


def measure(cluster: SlurmCluster, folder: Path, source: Path, i: int) -> dict[str, float]:
    ablation = folder / f"latency{i}.py"
    ablation.write_text(ABLATION.format(i=i, source=str(source), cache=str(folder / "cache")))
    results = folder / f"results{i}"
    start = time.time()
    done = subprocess.run([sys.executable, "-m", "cli.main", "sweep", str(ablation), "--results", str(results),
                           "--set", "vocab_size=512", "--no-report", "--backend", "slurm"],
                          env=cluster.env, capture_output=True, text=True, check=True)
    submitted = time.time()
    job = done.stdout.split()[0]
    deadline = time.monotonic() + 300
    while not list(results.glob("checkpoints/*/step0000001.ckpt")):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no first step after 300 s:\n{cluster.log_tail()}")
        time.sleep(0.05)
    first_step = list(results.glob("checkpoints/*/step0000001.ckpt"))[0].stat().st_mtime
    while job in cluster.queue():
        time.sleep(0.2)
    log = (results / "slurm" / f"{job}_0_log.out").read_text()
    return {"harness sweep returned": submitted - start,
            "task started": _log_time(log, "Starting with JobEnvironment") - start,
            "worker began the cell": _log_time(log, r"slurm-\S+: starting ") - start,
            "step 1 done": first_step - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cluster = SlurmCluster()
    try:
        cluster.start()
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            source = _corpus(folder)
            for i in range(args.repeats + 1):
                row = measure(cluster, folder, source, i)
                label = "warm-up (tokenizer and token cache built)" if i == 0 else f"repeat {i}"
                print(f"{label}: " + ", ".join(f"{name} {value:.2f} s" for name, value in row.items()), flush=True)
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
