"""Results-store benchmarks: logging cost per training step, and query time over a large synthetic store.

    python benchmarks/bench_db.py log   [--steps 20000]
    python benchmarks/bench_db.py query [--runs 1000 --rows-per-run 10000 --shards-per-run 1 --dir /tmp/bench_db]

`log` times a real RunWriter (flushes and close included) logging what one training step logs: 20
scalars plus 10 per-layer values for 12 layers. `query` writes synthetic shards with pyarrow straight into
the store's layout (as many writers would have), then times `harness db query` end to end and
in-process connect and query, before and after `harness db compact` (which merges shards and writes the
catalog index).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import db
from db.compact import compact
from db.paths import data_shard_name, run_dir, segment_shard_name
from db.schema import DATA_SCHEMAS, SCHEMA_VERSION, STATUS_SCHEMA, VERSION_FILE, shard_metadata

SCALARS = [f"scalar_{i}" for i in range(19)] + ["train_loss"]
LAYER_METRICS = [f"layer_metric_{i}" for i in range(10)]
N_LAYERS = 12
METRIC_NAMES = ["train_loss", "val_loss", "lr", "grad_norm", "z_loss", "tokens", "step_time", "logit_max", "logit_std",
                "log_z"]

FINAL_VAL_LOSS_SQL = "SELECT run_id, final_val_loss FROM runs"
DIRECT_SQL = ("SELECT run_id, arg_max(value, step) AS final_val_loss FROM metrics WHERE name = 'val_loss' GROUP BY "
              "run_id")


def _log_run(results: str, run_id: str, steps: int, layer_values: np.ndarray) -> None:
    writer = db.RunWriter.open(results, run_id, sweep="bench", config={"d_model": 768, "n_layers": N_LAYERS})
    for step in range(steps):
        writer.log_metrics(step, {name: 0.5 for name in SCALARS})
        for name, values in zip(LAYER_METRICS, layer_values):
            writer.log_layer_metrics(step, name, values)
    writer.close()


def bench_log(steps: int, repeats: int = 3) -> None:
    layer_values = np.random.default_rng(0).random((len(LAYER_METRICS), N_LAYERS))
    rows = steps * (len(SCALARS) + len(LAYER_METRICS) * N_LAYERS)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        _log_run(tmp, "warmup", 10, layer_values)  # pays pyarrow's lazy imports once, as any process does
        print(f"log: first tiny run (open, 10 steps, close; lazy imports) {time.perf_counter() - start:.3f} s")
        for repeat in range(repeats):
            start, cpu_start = time.perf_counter(), time.process_time()
            _log_run(tmp, f"bench-{repeat}", steps, layer_values)
            elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
            shards = sum(1 for _ in (Path(tmp) / "runs" / f"bench-{repeat}").rglob("*.parquet"))
            print(f"log: {steps} steps, {rows} rows, {shards} shards: wall {elapsed / steps * 1e6:.1f} µs/step, "
                  f"CPU {cpu / steps * 1e6:.1f} µs/step (open, flushes and close included)")


def _write(path: Path, table: pa.Table, name: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table.replace_schema_metadata(shard_metadata(name)), path, compression="zstd")


def generate(root: Path, runs: int, rows_per_run: int, shards_per_run: int) -> None:
    """A store of `runs` completed runs, `rows_per_run` metric rows each (10 names per step)."""
    root.mkdir(parents=True)
    (root / VERSION_FILE).write_text(f"{SCHEMA_VERSION}\n")
    rng = np.random.default_rng(0)
    steps_per_run = rows_per_run // len(METRIC_NAMES)
    now = pa.scalar(time.time_ns() // 1000, pa.timestamp("us", tz="UTC"))
    for i in range(runs):
        run_id = f"run-{i:05d}"
        path = run_dir(root, run_id)
        manifest = pa.table({
            "run_id": [run_id], "segment": pa.array([0], pa.int32()), "start_step": [0], "sweep": ["bench"],
            "arm": [f"arm-{i % 4}"], "seed": [i // 4], "params": [10**8], "flops_per_token": [6e8],
            "started_at": pa.array([now.value], pa.timestamp("us", tz="UTC")), "host": ["bench"], "pid": [None],
            "config": ['{"lr": 0.001}'], "config.lr": [10 ** -rng.uniform(2, 4)],
            "config.qk_norm": [["none", "rmsnorm"][i % 2]],
        })
        _write(path / "manifest" / segment_shard_name(0), manifest, "manifest")
        status = pa.table({"run_id": [run_id], "segment": [0], "status": ["completed"], "finished_at": [now.value],
                           "diverged_at_step": [None], "summary": [None]}, schema=STATUS_SCHEMA)
        _write(path / "status" / segment_shard_name(0), status, "status")
        steps = np.repeat(np.arange(steps_per_run, dtype=np.int64), len(METRIC_NAMES))
        names = np.tile(np.array(METRIC_NAMES, dtype=object), steps_per_run)
        values = 3.0 + rng.random(len(steps))
        for k, chunk in enumerate(np.array_split(np.arange(len(steps)), shards_per_run)):
            metrics = pa.table({
                "run_id": pa.array([run_id] * len(chunk)), "segment": pa.array(np.zeros(len(chunk), np.int32)),
                "step": steps[chunk], "name": pa.array(names[chunk], pa.string()), "value": values[chunk],
            }, schema=DATA_SCHEMAS["metrics"])
            _write(path / "metrics" / data_shard_name(0, k), metrics, "metrics")


def _timed(label: str, fn):
    start = time.perf_counter()
    result = fn()
    print(f"{label}: {time.perf_counter() - start:.3f} s")
    return result


def _cli(root: Path, sql: str) -> None:
    """Time `harness db query` end to end in a fresh process (import, connect, query, print)."""
    start = time.perf_counter()
    done = subprocess.run(["harness", "db", "query", sql, "--results", str(root), "--format", "csv"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    print(f"harness db query (fresh process, {len(done.stdout.splitlines()) - 1} rows): "
          f"{time.perf_counter() - start:.3f} s")


def bench_query(root: Path, runs: int, rows_per_run: int, shards_per_run: int) -> None:
    if root.exists():
        shutil.rmtree(root)
    _timed(f"generate {runs} runs × {rows_per_run} rows in {shards_per_run} shard(s) each",
           lambda: generate(root, runs, rows_per_run, shards_per_run))
    print("-- before compact (no index: every manifest, status and footer read at connect)")
    _cli(root, FINAL_VAL_LOSS_SQL)
    _timed("connect (in process, cold)", lambda: db.connect(root))
    _timed("harness db compact", lambda: compact(root))
    print("-- after compact (index)")
    _cli(root, FINAL_VAL_LOSS_SQL)
    con = _timed("connect (in process)", lambda: db.connect(root))
    total = con.execute("SELECT count(*) FROM metrics").fetchall()[0][0]
    print(f"metrics rows: {total}")
    for sql in (FINAL_VAL_LOSS_SQL, DIRECT_SQL):
        for attempt in ("first", "again"):
            rows = _timed(f"query ({attempt}) {sql!r}", lambda: con.execute(sql).fetchall())
            assert len(rows) == runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("log", "query"))
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--rows-per-run", type=int, default=10_000)
    parser.add_argument("--shards-per-run", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "bench_db")
    args = parser.parse_args()
    if args.what == "log":
        bench_log(args.steps)
    else:
        bench_query(args.dir, args.runs, args.rows_per_run, args.shards_per_run)


if __name__ == "__main__":
    main()
