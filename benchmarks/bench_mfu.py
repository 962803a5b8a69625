"""Throughput and model-FLOPs utilisation of a real `harness run` (the GPU target: stack-100m, bf16, compile).

Runs `harness run` as a user would, then reads the run back from the results store: steady-state tokens/s
is tokens per optimizer step over the median `step_time` after the warm-up steps (compilation excluded),
and MFU = tokens/s × the run's `flops_per_token` (analytic, forward + backward, at the run's seq_len) / the
device's peak dense FLOP/s.

    # on an H200 (peak bf16 dense ≈ 989 TFLOP/s):
    python benchmarks/bench_mfu.py --preset stack-100m --peak-tflops 989 \
        --set precision=bf16 --set compile=true --set device=cuda --set batch_size=64 --set seq_len=1024
    # the same path on this CPU, as a smoke run:
    python benchmarks/bench_mfu.py --preset tiny --steps 30 --warmup 10 --peak-tflops 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="stack-100m")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=20, help="steps left out of the steady state (compile, caches)")
    parser.add_argument("--peak-tflops", type=float, required=True,
                        help="the device's peak dense TFLOP/s at the run's precision")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE")
    args = parser.parse_args()

    results = tempfile.mkdtemp(prefix="bench-mfu-")
    # Probes and validation off the steady state: measure the training step itself.
    command = [
        sys.executable, "-m", "cli.main", "run", "--preset", args.preset, "--steps", str(args.steps),
        "--results", results, "--run-id", "mfu", "--no-progress",
        "--set", f"probe_every={args.steps}", "--set", f"val_every={args.steps}", "--set",
        f"checkpoint_every={args.steps}", *[item for pair in args.overrides for item in ("--set", pair)],
    ]
    print("$", " ".join(command), flush=True)
    subprocess.run(command, check=True)

    import db

    con = db.connect(results)
    [(flops_per_token, config)] = con.sql("select flops_per_token, config from runs where run_id = 'mfu'").fetchall()
    step_times = [row[0] for row in con.sql(
        f"select value from metrics where run_id = 'mfu' and name = 'step_time' and step > {args.warmup} order by step"
    ).fetchall()]
    cfg = json.loads(config)
    tokens_per_step = cfg["batch_size"] * cfg["seq_len"] * cfg["grad_accum"]
    step_time = statistics.median(step_times)
    tokens_per_second = tokens_per_step / step_time
    mfu = tokens_per_second * flops_per_token / (args.peak_tflops * 1e12)
    print(f"preset {args.preset}: {tokens_per_step:,} tokens/step, median step {step_time * 1e3:.1f} ms over "
          f"{len(step_times)} steps → {tokens_per_second:,.0f} tokens/s; {flops_per_token:,.0f} FLOPs/token → "
          f"MFU {mfu:.1%} of {args.peak_tflops:g} TFLOP/s")


if __name__ == "__main__":
    main()
