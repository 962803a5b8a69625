"""`harness sweep --backend slurm`: the SLURM options, their checks (before anything is written), the submission
(the command returns with the job ids, or follows the live display with --wait) and `--follow` (attach later)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

SLURM_ONLY = ("partition", "gpus_per_element", "gpu_type", "cpus_per_worker", "mem", "time", "account", "qos",
              "array_parallelism", "wait", "python", "setup", "sbatch")


def add_slurm_options(parser: argparse.ArgumentParser) -> None:
    """--backend, --follow and the options of the SLURM backend."""
    parser.add_argument("--backend", choices=("local", "slurm"), default="local",
                        help="local: worker processes here (default); slurm: a job array through submitit (docs/cluster.md)")
    parser.add_argument("--follow", action="store_true",
                        help="attach to a sweep submitted to SLURM: the live display until it ends, then its closing "
                        "(compaction, the report's last page) if the array has not done it")
    group = parser.add_argument_group("SLURM backend (--backend slurm): array elements, each one allocation on one node "
                                      "holding some of the --workers")
    group.add_argument("--partition", metavar="P", help="partition (default: the cluster's default)")
    group.add_argument("--gpus-per-element", type=int, metavar="G", help="GPUs each array element holds (default 0: CPU)")
    group.add_argument("--gpu-type", metavar="T", help="the GPUs' type as the cluster names it (a100, h100): --gpus-per-node=T:G")
    group.add_argument("--cpus-per-worker", "--cpus-per-task", dest="cpus_per_worker", type=int, metavar="C",
                       help="CPUs for each process of a worker, its torch threads (default: SLURM's, usually 1; "
                       "--cpus-per-task: the old spelling)")
    group.add_argument("--mem", metavar="M", help="memory per array element, SLURM's form: 16G, 16000 (MB)")
    group.add_argument("--time", metavar="T", help="time limit per allocation; at the limit each element checkpoints "
                       "and requeues itself (default 1:00:00)")
    group.add_argument("--account", metavar="A", help="SLURM account to charge")
    group.add_argument("--qos", metavar="Q", help="quality of service")
    group.add_argument("--array-parallelism", type=int, metavar="N", help="array elements running at once (default: all)")
    group.add_argument("--python", metavar="PATH", help="the interpreter the tasks run (default: this one; refused when "
                       "compute nodes cannot see it), or a command the --setup lines put on PATH")
    group.add_argument("--setup", action="append", default=[], metavar="LINE",
                       help="a shell line each element runs first, e.g. 'module load cuda/12.4' (repeatable)")
    group.add_argument("--sbatch", action="append", default=[], metavar="KEY=VALUE",
                       help="any other sbatch option, e.g. constraint=a100, exclude=node07, or a flag: exclusive (repeatable)")
    group.add_argument("--wait", action="store_true", help="follow the live display until the sweep ends (default: "
                       "return with the job ids)")


def slurm_launcher(args, results_dir: Path, sweep: str, layout, report: list[str] | None):
    """The launcher for `--backend slurm`, checked against SLURM (sbatch present, partition known, sbatch would take
    the array) and the interpreter against the results' filesystem; None for the local backend, which refuses
    the SLURM-only options. Raises ConfigError before anything is written; a warning waits in `args.warning`."""
    from errors import ConfigError

    given = [name for name in SLURM_ONLY if getattr(args, name) not in (None, False, [])]
    if args.backend == "local":
        if given:
            raise ConfigError(f"--{given[0].replace('_', '-')} needs --backend slurm.")
        return None
    if args.devices != "auto":
        raise ConfigError("--devices is for --backend local; on SLURM use --gpus-per-element and --workers-per-device.")
    from experiments import SlurmLauncher, SlurmResources
    from experiments.backends.slurm.interpreter import check_interpreter
    from experiments.backends.slurm.resources import parse_sbatch

    resources = SlurmResources(
        partition=args.partition, gpus_per_element=args.gpus_per_element or 0, gpu_type=args.gpu_type,
        cpus_per_worker=args.cpus_per_worker, mem=args.mem, time=args.time or "1:00:00", account=args.account,
        qos=args.qos, array_parallelism=args.array_parallelism, python=args.python, setup=tuple(args.setup),
        sbatch=tuple(parse_sbatch(args.sbatch).items()))
    launcher = SlurmLauncher(
        results_dir, sweep, layout=layout, resources=resources, retries=args.retries, stale_after=args.stale_after,
        worker_args=("--heartbeat-every", str(args.heartbeat_every), "--keep-checkpoints", args.keep_checkpoints,
                     *(("--optuna-storage", args.optuna_storage) if args.optuna_storage else ())),
        report=None if report is None else report[1:])
    launcher.check()
    args.warning = check_interpreter(args.python or sys.executable, results_dir, given=args.python is not None)
    return launcher


def submit(launcher, args) -> int:
    """Submit (unless every cell is finished), print the job ids and how to follow them; --wait follows."""
    from experiments.workers.progress import ProgressReader
    from experiments.backends.slurm.logs import slurm_dir

    if getattr(args, "warning", None):
        print(f"harness sweep: warning: {args.warning}", file=sys.stderr)
    progress = ProgressReader(launcher.results_dir, launcher.sweep, launcher.retries, launcher.stale_after).read()
    if progress.done == progress.total:
        print(f"sweep {launcher.sweep}: every cell is finished; nothing submitted.", file=sys.stderr)
        return 0
    jobs = launcher.submit()
    array = jobs[0].split("_")[0]
    workers = launcher.workers_per_element
    print(f"submitted job {array}: {len(jobs)} array element{'s' if len(jobs) > 1 else ''} × "
          f"{workers} worker{'s' if workers > 1 else ''}, logs under {slurm_dir(launcher.results_dir)}/", file=sys.stderr)
    print(" ".join(jobs))
    if not args.wait:
        print(f"  follow: harness sweep {args.ablation} --follow --results {launcher.results_dir}\n"
              f"  cancel: scancel {array}", file=sys.stderr)
        return 0
    return launcher.follow(jobs, progress=not args.no_progress)


def follow(args, sweep: str, results_dir: Path, report: list[str] | None) -> int:
    """`--follow`: the live display of a sweep submitted to SLURM from this results directory, then its closing."""
    import shutil

    import db
    from errors import ConfigError
    from experiments import SlurmLauncher

    for option in ("dry_run", "status", "wait"):
        if getattr(args, option):
            raise ConfigError(f"--follow and --{option.replace('_', '-')}: give one.")
    if db.read_sweep_meta(results_dir, sweep) is None:
        raise ConfigError(f"--follow: no sweep {sweep!r} in {results_dir} (`harness sweeps --results {results_dir}` "
                          "lists them).")
    if shutil.which("squeue") is None:
        raise ConfigError("--follow needs SLURM's squeue on PATH; it is not there (is this a SLURM login node?).")
    launcher = SlurmLauncher(results_dir, sweep, retries=args.retries, stale_after=args.stale_after,
                             report=None if report is None else report[1:])
    return launcher.follow(progress=not args.no_progress)
