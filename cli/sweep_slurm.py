"""`harness sweep --backend slurm`: the SLURM options, their checks (before anything is written), the submission
(the command returns with the job ids, or follows the live display with --wait) and `--follow` (attach later)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path

from experiments.backends.slurm.resources import SlurmResources, parse_sbatch

SLURM_ONLY = ("partition", "gpus_per_element", "gpu_type", "cpus_per_worker", "mem", "time", "account", "qos",
              "array_parallelism", "wait", "python", "setup", "sbatch")
RESOURCES = ("partition", "gpus_per_element", "gpu_type", "cpus_per_worker", "mem", "time", "account", "qos",
             "array_parallelism", "python", "setup")  # SlurmResources' fields, as given (the rest keep its defaults)


@dataclass(frozen=True)
class SlurmOptions:
    """`--backend`, `--follow` and the SLURM backend's options as given (None: not given)."""

    backend: str = "local"
    follow: bool = False
    wait: bool = False
    partition: str | None = None
    gpus_per_element: int | None = None
    gpu_type: str | None = None
    cpus_per_worker: int | None = None
    mem: str | None = None
    time: str | None = None
    account: str | None = None
    qos: str | None = None
    array_parallelism: int | None = None
    python: str | None = None
    setup: tuple[str, ...] = ()
    sbatch: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "SlurmOptions":
        values = {field.name: getattr(args, field.name) for field in dataclasses.fields(cls)}
        return cls(**{**values, "setup": tuple(args.setup), "sbatch": tuple(args.sbatch)})

    def given(self) -> list[str]:
        """The SLURM-only options given, in SLURM_ONLY's order."""
        return [name for name in SLURM_ONLY if getattr(self, name) not in (None, False, ())]

    def resources(self) -> SlurmResources:
        """The array element's `SlurmResources` (ConfigError for a bad value)."""
        given = {name: getattr(self, name) for name in RESOURCES if getattr(self, name) is not None}
        return SlurmResources(**given, sbatch=tuple(parse_sbatch(list(self.sbatch)).items()))


def add_slurm_options(parser: argparse.ArgumentParser) -> None:
    """--backend, --follow and the options of the SLURM backend."""
    parser.add_argument("--backend", choices=("local", "slurm"), default="local",
                        help="local: worker processes here (default); slurm: a job array through submitit "
                        "(docs/cluster.md)")
    parser.add_argument("--follow", action="store_true",
                        help="attach to a sweep submitted to SLURM: the live display until it ends, then its closing "
                        "(compaction, the report's last page) if the array has not done it")
    group = parser.add_argument_group("SLURM backend (--backend slurm): array elements, each one allocation on one "
                                      "node holding some of the --workers")
    group.add_argument("--partition", metavar="P", help="partition (default: the cluster's default)")
    group.add_argument("--gpus-per-element", type=int, metavar="G",
                       help=f"GPUs each array element holds (default {SlurmResources.gpus_per_element}: CPU)")
    group.add_argument("--gpu-type", metavar="T",
                       help="the GPUs' type as the cluster names it (a100, h100): --gpus-per-node=T:G")
    group.add_argument("--cpus-per-worker", "--cpus-per-task", dest="cpus_per_worker", type=int, metavar="C",
                       help="CPUs for each process of a worker, its torch threads (default: SLURM's, usually 1; "
                       "--cpus-per-task: the old spelling)")
    group.add_argument("--mem", metavar="M", help="memory per array element, SLURM's form: 16G, 16000 (MB)")
    group.add_argument("--time", metavar="T", help="time limit per allocation; at the limit each element checkpoints "
                       f"and requeues itself (default {SlurmResources.time})")
    group.add_argument("--account", metavar="A", help="SLURM account to charge")
    group.add_argument("--qos", metavar="Q", help="quality of service")
    group.add_argument("--array-parallelism", type=int, metavar="N",
                       help="array elements running at once (default: all)")
    group.add_argument("--python", metavar="PATH", help="the interpreter the tasks run (default: this one; refused "
                       "when compute nodes cannot see it), or a command the --setup lines put on PATH")
    group.add_argument("--setup", action="append", default=[], metavar="LINE",
                       help="a shell line each element runs first, e.g. 'module load cuda/12.4' (repeatable)")
    group.add_argument("--sbatch", action="append", default=[], metavar="KEY=VALUE",
                       help="any other sbatch option, e.g. constraint=a100, exclude=node07, or a flag: exclusive "
                       "(repeatable)")
    group.add_argument("--wait", action="store_true", help="follow the live display until the sweep ends (default: "
                       "return with the job ids)")


def slurm_launcher(request, results_dir: Path, sweep: str, report: list[str] | None):
    """(launcher, warning): the launcher for `--backend slurm`, checked against SLURM (sbatch present, partition
    known, sbatch would take the array) and the interpreter against the results' filesystem, with a warning to
    print once the plan is written (or None); (None, None) for the local backend, which refuses the SLURM-only
    options. `request`: cli.sweep.SweepRequest. Raises ConfigError before anything is written."""
    from errors import ConfigError

    slurm = request.slurm
    given = slurm.given()
    if slurm.backend == "local":
        if given:
            raise ConfigError(f"--{given[0].replace('_', '-')} needs --backend slurm.")
        return None, None
    if request.devices != "auto":
        raise ConfigError("--devices is for --backend local; on SLURM use --gpus-per-element and --workers-per-device.")
    from experiments import SlurmLauncher
    from experiments.backends.slurm.interpreter import check_interpreter

    launcher = SlurmLauncher(
        results_dir, sweep, layout=request.layout, resources=slurm.resources(), retries=request.retries,
        stale_after=request.stale_after, report=None if report is None else report[1:],
        worker_args=("--heartbeat-every", str(request.heartbeat_every), "--keep-checkpoints", request.keep_checkpoints,
                     *(("--optuna-storage", request.optuna_storage) if request.optuna_storage else ())))
    launcher.check()
    warning = check_interpreter(slurm.python or sys.executable, results_dir, given=slurm.python is not None)
    return launcher, warning


def submit(launcher, request, warning: str | None) -> int:
    """Submit (unless every cell is finished), print the job ids and how to follow them; --wait follows."""
    from experiments.backends.slurm.logs import slurm_dir
    from experiments.workers.progress import ProgressReader

    if warning:
        print(f"harness sweep: warning: {warning}", file=sys.stderr)
    progress = ProgressReader(launcher.results_dir, launcher.sweep, launcher.retries, launcher.stale_after).read()
    if progress.done == progress.total:
        print(f"sweep {launcher.sweep}: every cell is finished; nothing submitted.", file=sys.stderr)
        return 0
    jobs = launcher.submit()
    array = jobs[0].split("_")[0]
    workers = launcher.workers_per_element
    print(f"submitted job {array}: {len(jobs)} array element{'s' if len(jobs) > 1 else ''} × "
          f"{workers} worker{'s' if workers > 1 else ''}, logs under {slurm_dir(launcher.results_dir)}/",
          file=sys.stderr)
    print(" ".join(jobs))
    if not request.slurm.wait:
        print(f"  follow: harness sweep {request.ablation} --follow --results {launcher.results_dir}\n"
              f"  cancel: scancel {array}", file=sys.stderr)
        return 0
    return launcher.follow(jobs, progress=request.progress)


def follow(request, sweep: str, results_dir: Path, report: list[str] | None) -> int:
    """`--follow`: the live display of a sweep submitted to SLURM from this results directory, then its closing."""
    import shutil

    import db
    from errors import ConfigError
    from experiments import SlurmLauncher

    for option, given in (("dry-run", request.dry_run), ("status", request.status), ("wait", request.slurm.wait)):
        if given:
            raise ConfigError(f"--follow and --{option}: give one.")
    if db.read_sweep_meta(results_dir, sweep) is None:
        raise ConfigError(f"--follow: no sweep {sweep!r} in {results_dir} (`harness sweeps --results {results_dir}` "
                          "lists them).")
    if shutil.which("squeue") is None:
        raise ConfigError("--follow needs SLURM's squeue on PATH; it is not there (is this a SLURM login node?).")
    launcher = SlurmLauncher(results_dir, sweep, retries=request.retries, stale_after=request.stale_after,
                             report=None if report is None else report[1:])
    return launcher.follow(progress=request.progress)
