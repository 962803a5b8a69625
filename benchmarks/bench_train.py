"""Training overhead of the `harness run` path against a bare PyTorch loop, and the fixed start-up cost.

    python benchmarks/bench_train.py overhead [--steps 150 --warmup 20 --pairs 3 --preset tiny]
    python benchmarks/bench_train.py floor [--steps 300 --warmup 50 --repeats 3]
    python benchmarks/bench_train.py startup [--repeats 3]

overhead: the same model (same seed, same init), the same batches (`TokenDataModule.train_batch(i)`), the
same AdamW/LambdaLR/clipping, trained by (a) `train_run`, the function behind `harness run`, with every
callback at its defaults (per-step telemetry, probes every `probe_every`, validation, checkpoints, progress
bar, results store), and (b) a bare loop (forward, F.cross_entropy, backward, clip, step, `loss.item()`).
Steady state = wall time from the end of step `warmup` to the end of the last step, divided by the steps
in between; the harness side is timed by a logger that only reads the clocks when a step's metrics
arrive, so probes, validation and logging are all inside the measured time. Pairs alternate (bare,
harness) so load changes hit both; the reported ratios are medians over pairs, of wall time and of this
process's CPU time (less sensitive to other jobs on a shared machine).

floor: the same comparison on a model so small (d_model 16, 1 layer, batch 1 × 8 tokens) that compute is
nearly nothing, in one thread's CPU time: the difference is the fixed per-step cost of the harness path
(Lightning's loop and hooks, telemetry, spike/divergence checks, logger, progress bar), which a shared
machine's load barely disturbs.

startup: `harness run --preset tiny --steps 1` as a subprocess with a warm data cache; the cost is the
wall time from launching the command to the start of its first training step (recorded by the run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def bare_loop_seconds(model_cfg, train_cfg, data, steps: int, warmup: int) -> tuple[float, float]:
    """(wall, CPU) seconds per step of a plain PyTorch loop over the same batches, after `warmup` steps."""
    import torch
    import torch.nn.functional as F
    from lightning.pytorch import seed_everything

    from harness.data import TokenDataModule
    from harness.model import build_model
    from harness.train.optim import build_optimizer

    if train_cfg.flush_denormal:
        torch.set_flush_denormal(True)
    seed_everything(train_cfg.seed, verbose=False)
    model = build_model(model_cfg)
    optimizer, scheduler = build_optimizer(model, train_cfg)
    batches = TokenDataModule(data, train_cfg.seq_len, train_cfg.batch_size, train_cfg.seed)
    for step in range(steps):
        if step == warmup:
            started, cpu_started = time.perf_counter(), time.process_time()
        input_ids, targets = batches.train_batch(step)
        logits = model(input_ids)  # (B, T, V)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), train_cfg.grad_clip)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        loss.item()
    return (time.perf_counter() - started) / (steps - warmup), (time.process_time() - cpu_started) / (steps - warmup)


def harness_seconds(model_cfg, train_cfg, data_cfg, data, steps: int, warmup: int) -> tuple[float, float, dict]:
    """(wall, CPU) seconds per step of `train_run` with all telemetry (between step `warmup` and the last), and its
    summary."""
    from lightning.pytorch.loggers import Logger

    from harness.train.run import RunSpec, train_run

    class Stopwatch(Logger):
        """Notes the clock when the train loss of a step arrives, i.e. when that step's telemetry has run."""

        name, version = "stopwatch", "0"
        ends: dict[int, tuple[float, float]] = {}

        def log_metrics(self, metrics, step=None):
            if "train_loss" in metrics:
                self.ends[step] = (time.perf_counter(), time.process_time())

        def log_hyperparams(self, *args, **kwargs):
            pass

    watch = Stopwatch()
    with tempfile.TemporaryDirectory() as results:
        spec = RunSpec(model_cfg, train_cfg, data_cfg, Path(results), "bench")
        outcome = train_run(spec, data, extra_loggers=[watch], progress=True)
    (wall_end, cpu_end), (wall_start, cpu_start) = watch.ends[steps], watch.ends[warmup]
    return (wall_end - wall_start) / (steps - warmup), (cpu_end - cpu_start) / (steps - warmup), outcome.summary


def overhead(args: argparse.Namespace) -> None:
    from harness.config import DataConfig, TrainConfig
    from harness.data import prepare
    from harness.presets import from_name

    model_cfg = from_name(args.preset)
    train_cfg = TrainConfig(steps=args.steps)
    data_cfg = DataConfig()
    data = prepare(data_cfg, model_cfg.vocab_size)
    print(f"preset {args.preset}, steps {args.steps} (steady state after {args.warmup}), probe_every "
          f"{train_cfg.probe_every}, val_every {train_cfg.val_every}, "
          f"batch {train_cfg.batch_size}×{train_cfg.seq_len}; "
          f"load {os.getloadavg()[0]:.2f}")
    ratios, cpu_ratios, probe_shares = [], [], []
    for pair in range(args.pairs):
        bare, bare_cpu = bare_loop_seconds(model_cfg, train_cfg, data, args.steps, args.warmup)
        full, full_cpu, summary = harness_seconds(model_cfg, train_cfg, data_cfg, data, args.steps, args.warmup)
        probe_share = summary["probe_seconds"] / (full * args.steps)
        ratios.append(full / bare)
        cpu_ratios.append(full_cpu / bare_cpu)
        probe_shares.append(probe_share)
        print(f"pair {pair}: bare {bare * 1e3:.1f} ms/step (CPU {bare_cpu * 1e3:.1f}), harness run {full * 1e3:.1f} "
              f"ms/step (CPU {full_cpu * 1e3:.1f}), ratio {full / bare:.3f} (CPU {full_cpu / bare_cpu:.3f}), "
              f"probe share {100 * probe_share:.2f}%  (load {os.getloadavg()[0]:.2f})", flush=True)
    print(f"median ratio {statistics.median(ratios):.3f} wall, {statistics.median(cpu_ratios):.3f} CPU; "
          f"median probe share {100 * statistics.median(probe_shares):.2f}%")


def floor(args: argparse.Namespace) -> None:
    import torch

    from harness.config import DataConfig, TrainConfig
    from harness.data import prepare
    from harness.presets import from_name

    torch.set_num_threads(1)  # CPU time of one thread: no spin-waiting, little sensitivity to other jobs
    model_cfg = from_name("tiny", d_model=16, n_layers=1, n_heads=2, n_kv_heads=1)
    never = 10**9  # the per-step path only: no probe, validation or checkpoint inside the timed steps
    train_cfg = TrainConfig(steps=args.steps, batch_size=1, seq_len=8, probe_every=never, val_every=never,
                            checkpoint_every=never)
    data_cfg = DataConfig()
    data = prepare(data_cfg, model_cfg.vocab_size)
    for repeat in range(args.repeats):
        _, bare = bare_loop_seconds(model_cfg, train_cfg, data, args.steps, args.warmup)
        _, full, _ = harness_seconds(model_cfg, train_cfg, data_cfg, data, args.steps, args.warmup)
        print(f"repeat {repeat}: bare {bare * 1e3:.2f} ms/step, harness run {full * 1e3:.2f} ms/step (CPU, 1 thread): "
              f"fixed cost {1e3 * (full - bare):.2f} ms/step  (load {os.getloadavg()[0]:.2f})", flush=True)


def startup(args: argparse.Namespace) -> None:
    command = ["harness", "run", "--preset", "tiny", "--steps", "1", "--no-progress"]
    with tempfile.TemporaryDirectory() as results:
        subprocess.run([*command, "--results", results, "--run-id", "warm-cache"], check=True, capture_output=True)
        for repeat in range(args.repeats):
            launched = time.time()
            subprocess.run([*command, "--results", results, "--run-id", f"r{repeat}"], check=True, capture_output=True)
            import db

            (summary,) = db.connect(results).execute("SELECT summary FROM runs WHERE run_id = ?",
                                                     [f"r{repeat}"]).fetchone()
            first_step = json.loads(summary)["first_step_at"]
            print(f"repeat {repeat}: command start → first step {first_step - launched:.2f} s  (load "
                  f"{os.getloadavg()[0]:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    over = commands.add_parser("overhead")
    over.add_argument("--preset", default="tiny")
    over.add_argument("--steps", type=int, default=150)
    over.add_argument("--warmup", type=int, default=20)
    over.add_argument("--pairs", type=int, default=3)
    over.set_defaults(run=overhead)
    low = commands.add_parser("floor")
    low.add_argument("--steps", type=int, default=300)
    low.add_argument("--warmup", type=int, default=50)
    low.add_argument("--repeats", type=int, default=3)
    low.set_defaults(run=floor)
    start = commands.add_parser("startup")
    start.add_argument("--repeats", type=int, default=3)
    start.set_defaults(run=startup)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
