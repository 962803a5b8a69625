"""`harness sweep --backend slurm`: the SLURM options, their checks (before anything is written), and the
submission (the command returns with the job ids, or follows the live display with --wait)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SLURM_ONLY = ("partition", "gpus_per_task", "cpus_per_task", "mem", "time", "account", "qos", "array_parallelism", "wait")


def add_slurm_options(parser: argparse.ArgumentParser) -> None:
    """--backend and the options of the SLURM backend (`--tasks-per-gpu` is `--per-device`, see sweep.py)."""
    parser.add_argument("--backend", choices=("local", "slurm"), default="local",
                        help="local: worker processes here (default); slurm: a job array through submitit (docs/cluster.md)")
    group = parser.add_argument_group("SLURM backend (--backend slurm; --workers N = array elements)")
    group.add_argument("--partition", metavar="P", help="partition (default: the cluster's default)")
    group.add_argument("--gpus-per-task", type=int, metavar="G", help="GPUs per array element (default 0: CPU)")
    group.add_argument("--cpus-per-task", type=int, metavar="C", help="CPUs per worker (default: SLURM's, usually 1)")
    group.add_argument("--mem", metavar="M", help="memory per array element, SLURM's form: 16G, 16000 (MB)")
    group.add_argument("--time", metavar="T", help="time limit per allocation; at the limit each element checkpoints "
                       "and requeues itself (default 1:00:00)")
    group.add_argument("--account", metavar="A", help="SLURM account to charge")
    group.add_argument("--qos", metavar="Q", help="quality of service")
    group.add_argument("--array-parallelism", type=int, metavar="N", help="array elements running at once (default: all)")
    group.add_argument("--wait", action="store_true", help="follow the live display until the sweep ends (default: "
                       "return with the job ids)")


def slurm_launcher(args, results_dir: Path, sweep: str):
    """The launcher for `--backend slurm`, checked against SLURM (sbatch present, partition known); None for
    the local backend, which refuses the SLURM-only options. Raises ConfigError before anything is written."""
    from harness.config.base import ConfigError

    given = [name for name in SLURM_ONLY if getattr(args, name) not in (None, False)]
    if args.backend == "local":
        if given:
            raise ConfigError(f"--{given[0].replace('_', '-')} needs --backend slurm.")
        return None
    if args.devices != "auto":
        raise ConfigError("--devices is for --backend local; on SLURM use --gpus-per-task and --tasks-per-gpu.")
    from experiments import SlurmLauncher

    launcher = SlurmLauncher(
        results_dir, sweep, workers=args.workers or 1, partition=args.partition, gpus_per_task=args.gpus_per_task or 0,
        cpus_per_task=args.cpus_per_task, mem=args.mem, time=args.time or "1:00:00", account=args.account,
        qos=args.qos, array_parallelism=args.array_parallelism, tasks_per_gpu=args.per_device, retries=args.retries,
        stale_after=args.stale_after,
        worker_args=("--heartbeat-every", str(args.heartbeat_every),
                     *(("--optuna-storage", args.optuna_storage) if args.optuna_storage else ())),
    )
    launcher.check()
    return launcher


def submit(launcher, args, report) -> int:
    """Submit (unless every cell is finished), print the job ids and how to follow them; --wait follows."""
    from experiments.workers.progress import ProgressReader
    from experiments.backends.slurm.logs import slurm_dir

    progress = ProgressReader(launcher.results_dir, launcher.sweep, launcher.retries, launcher.stale_after).read()
    if progress.done == progress.total:
        print(f"sweep {launcher.sweep}: every cell is finished; nothing submitted.", file=sys.stderr)
        return 0
    jobs = launcher.submit()
    array = jobs[0].split("_")[0]
    print(f"submitted job {array}: {len(jobs)} array element{'s' if len(jobs) > 1 else ''} × "
          f"{launcher.tasks_per_element} worker{'s' if launcher.tasks_per_element > 1 else ''}, "
          f"logs under {slurm_dir(launcher.results_dir)}/", file=sys.stderr)
    print(" ".join(jobs))
    if not args.wait:
        print(f"  follow: harness sweep {args.ablation} --status --results {launcher.results_dir}\n"
              f"  cancel: scancel {array}", file=sys.stderr)
        return 0
    return launcher.follow(jobs, progress=not args.no_progress, report=report)
