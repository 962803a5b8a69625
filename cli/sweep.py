"""`harness sweep ABLATION`: expand an ablation into cells, validate them all, and run every cell exactly
once on this machine (`--dry-run` lists them, `--status` shows a sweep that runs elsewhere). See docs/sweeps.md.

Imported inside the functions below, and only there, is what would cost every `harness` command start-up time
(cli/main.py imports this module to build its parser): `db` (numpy and pyarrow, about 0.3 s of CPU; also through
the local backend, the search runner and the progress reader) and the planner (`experiments.expand` and
`experiments.declare.load`, about 0.1 s). `harness sweep` itself starts its standby workers before it imports
the planner, so their torch and Lightning imports overlap its planning.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cli import until_decided
from cli.rerun_changed import add_option as add_rerun_changed
from cli.rerun_changed import settle_sweep_code
from cli.run import add_keep_checkpoints
from cli.run_checks import check_results_dir
from cli.sweep_dry_run import print_dry_run
from cli.sweep_identity import settle_plan
from cli.sweep_layout import add_layout_options, check_cells, layout_from
from cli.sweep_slurm import SlurmOptions, add_slurm_options, follow, slurm_launcher, submit
from errors import ConfigError
from experiments.backends.devices import parse_devices, worker_slots
from experiments.backends.layout import Layout
from experiments.backends.slurm.logs import failed_cell_log
from experiments.workers.options import (
    DEFAULT_RETRIES,
    DEFAULT_STALE_AFTER,
    HEARTBEAT_EVERY,
    MIN_BEATS,
    check_stale_after,
)
from harness.config.run_configs import parse_overrides


def register(subparsers) -> None:
    """Add `harness sweep` to the CLI."""
    parser = subparsers.add_parser(
        "sweep", help="run an ablation grid: every cell once, resumable after any crash",
        description="Expand an ablation (a module of ablations/ or a .py file) into cells and train each once. "
        "Running the same command again skips finished cells. See docs/sweeps.md.",
    )
    parser.add_argument("ablation", metavar="ABLATION",
                        help="a name from `harness ablations`, or a path to a .py file defining one Ablation")
    parser.add_argument("--preset", metavar="NAME", help="replace the ablation's base model with this preset")
    parser.add_argument("--steps", type=int, metavar="N", help="train every cell for N steps (replaces the budget)")
    parser.add_argument("--seeds", type=int, metavar="N", help="seeds per cell (replaces the ablation's count)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE",
                        help="set a ModelConfig/TrainConfig/DataConfig field of the base (repeatable)")
    add_layout_options(parser)
    parser.add_argument("--devices", default="auto", metavar="auto|cpu|cuda:0,cuda:1",
                        help="where workers run on this machine (default: auto)")
    parser.add_argument("--name", metavar="NAME",
                        help="run the ablation under this sweep name (default: the ablation's name)")
    parser.add_argument("--replace", action="store_true",
                        help="make this launch's plan the sweep's plan even where it differs from the stored one "
                        "(steps, seeds, --set, source, question); the old plan is kept in the sweep's history")
    parser.add_argument("--retries", type=int, default=DEFAULT_RETRIES, metavar="N",
                        help="retries of a cell that raised before it is stored as failed (default %(default)s)")
    parser.add_argument("--stale-after", type=float, default=DEFAULT_STALE_AFTER, metavar="S",
                        help="seconds a worker's heartbeat may stay unchanged before another worker, on any host, "
                        f"takes its cell over (default %(default)g; at least {MIN_BEATS} heartbeats)")
    parser.add_argument("--heartbeat-every", type=float, default=HEARTBEAT_EVERY, metavar="S",
                        help="seconds between a worker's heartbeats (default %(default)g)")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.add_argument("--dry-run", action="store_true", help="list every cell and an estimated time; train nothing")
    parser.add_argument("--status", action="store_true", help="show the progress of this sweep from the store and exit")
    parser.add_argument("--no-progress", action="store_true", help="no live display (batch jobs)")
    parser.add_argument("--no-report", action="store_true", help="do not rewrite the HTML report as cells finish")
    parser.add_argument("--optuna-storage", metavar="URL",
                        help="SQLAlchemy URL of the Optuna storage of `tune=` searches (default: "
                        "sqlite:///<results>/optuna.db; PostgreSQL on a cluster)")
    add_keep_checkpoints(parser)
    add_rerun_changed(parser)
    add_slurm_options(parser)
    until_decided.add_options(parser)
    parser.set_defaults(handler=sweep)


@dataclass(frozen=True)
class SweepRequest:
    """`harness sweep`'s options, parsed and checked once (`from_args`) before anything else runs; every function
    below reads them from here. A round of --until-decided is the same request with its own seed count."""

    ablation: str
    preset: str | None
    steps: int | None
    seeds: int | None
    overrides: tuple[str, ...]
    layout: Layout
    devices: str
    name: str | None
    replace: bool
    retries: int
    stale_after: float
    heartbeat_every: float
    results: str | None
    dry_run: bool
    status: bool
    progress: bool
    report: bool
    optuna_storage: str | None
    keep_checkpoints: str
    rerun_changed: bool
    slurm: SlurmOptions
    until: until_decided.UntilDecided

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> "SweepRequest":
        """The request of the parsed command line; ConfigError for a value no sweep could take."""
        for option in ("steps", "seeds"):
            value = getattr(args, option)
            if value is not None and value < 1:
                raise ConfigError(f"--{option} {value} is invalid: must be ≥ 1.")
        if args.retries < 0:
            raise ConfigError(f"--retries {args.retries} is invalid: must be ≥ 0.")
        check_stale_after(args.stale_after, args.heartbeat_every)
        layout = layout_from(args)
        if args.dry_run and args.status:
            raise ConfigError("--dry-run and --status: give one.")
        return cls(
            ablation=args.ablation, preset=args.preset, steps=args.steps, seeds=args.seeds,
            overrides=tuple(args.overrides), layout=layout, devices=args.devices, name=args.name, replace=args.replace,
            retries=args.retries, stale_after=args.stale_after, heartbeat_every=args.heartbeat_every,
            results=args.results, dry_run=args.dry_run, status=args.status, progress=not args.no_progress,
            report=not args.no_report, optuna_storage=args.optuna_storage, keep_checkpoints=args.keep_checkpoints,
            rerun_changed=args.rerun_changed, slurm=SlurmOptions.from_args(args),
            until=until_decided.UntilDecided.from_args(args))

    @property
    def starts_no_worker(self) -> bool:
        """--dry-run, --status, --follow and SLURM start no local worker."""
        return self.dry_run or self.status or self.slurm.follow or self.slurm.backend != "local"


def plan_sweep(request: SweepRequest, seed_round: until_decided.SeedRound | None = None):
    """(plan, source, results_dir): the ablation expanded and every cell validated; nothing written yet.
    `seed_round`: a round of --until-decided, whose plan keeps its seeds per (arm, lr)."""
    import db
    from experiments import expand
    from experiments.declare.load import load_ablation

    ablation, source = load_ablation(request.ablation)
    if request.name is not None:
        ablation = dataclasses.replace(ablation, name=request.name)
    overrides = parse_overrides(list(request.overrides))
    if seed_round is None:  # once, not again for every round of --until-decided
        warn_ignored(ablation, overrides, request)
    plan = expand(ablation, preset=request.preset, steps=request.steps, seeds=request.seeds, overrides=overrides)
    if seed_round is not None:
        plan = seed_round.keep(plan)
    check_cells(plan, request.layout)
    results_dir = Path(db.resolve_results_dir(request.results))
    check_results_dir(results_dir, create=not (request.dry_run or request.status))
    if plan.studies and request.rerun_changed:
        raise ConfigError(f"--rerun-changed: sweep {plan.name!r} is a search, whose trials its studies have already "
                          "told their values; retrain it as a new sweep (--name NEW).")
    if plan.studies and request.optuna_storage and not (request.dry_run or request.status):
        from experiments.search.runner import check_storage

        check_storage(request.optuna_storage)
    return plan, source, results_dir


def sweep(args: argparse.Namespace) -> int:
    """`harness sweep`: parse the options once, then launch the sweep (in rounds with --until-decided)."""
    request = SweepRequest.from_args(args)
    if request.until.requested:
        return until_decided.run(request)
    return launch(request)


def launch(request: SweepRequest, seed_round: until_decided.SeedRound | None = None) -> int:
    """Validate everything, then list (--dry-run), report (--status) or run the sweep (or one round of it)."""
    devices = parse_devices(request.devices)
    standby = start_standby(request, devices)  # a local run's workers import torch and Lightning while we plan
    try:
        return plan_and_run(request, devices, standby, seed_round)
    finally:
        if standby is not None:
            standby.cancel()  # those never handed a sweep: bad input, or nothing left to train


def start_standby(request: SweepRequest, devices: list[str]):
    """The local workers, started on standby (experiments.backends.local_workers) before the sweep is planned;
    None where no local worker starts, and on bad options (refused again, with their message, when planned)."""
    from experiments.backends.local_workers import StandbyWorkers

    if request.starts_no_worker:
        return None
    layout = request.layout
    try:
        slots = worker_slots(devices, layout.workers, layout.workers_per_device, layout.devices_per_cell)
    except ConfigError:
        return None
    return StandbyWorkers(slots, layout.placement).start()


def plan_and_run(request: SweepRequest, devices: list[str], standby, seed_round) -> int:
    """Everything after the standby workers started: plan, validate, then list, report, submit or run."""
    import db

    if (request.status or request.slurm.follow) and stored_only(request):
        results_dir = Path(db.resolve_results_dir(request.results))
        if request.slurm.follow:
            return _follow(request, request.ablation, results_dir)
        return show_status(results_dir, request.ablation, request.retries, request.stale_after)
    plan, source, results_dir = plan_sweep(request, seed_round)
    if request.slurm.follow:
        return _follow(request, plan.name, results_dir)
    layout = request.layout
    report = report_command(results_dir, plan.name) if request.report else None
    launcher, warning = slurm_launcher(request, results_dir, plan.name, report)  # refusals before any write
    slots = [] if launcher is not None else worker_slots(devices, layout.workers, layout.workers_per_device,
                                                          layout.devices_per_cell)
    if request.status:
        return show_status(results_dir, plan.name, request.retries, request.stale_after)
    if request.dry_run:
        warn_short_warmup(plan.cells)
        print_dry_run(plan, results_dir, layout.workers or 1)
        return 0
    _write_plan(request, plan, source, results_dir, seed_round)
    if launcher is not None:
        code = submit(launcher, request, warning)
        if request.slurm.wait:
            print(closing_lines(results_dir, plan.name))
        return code
    return _run_here(request, results_dir, plan.name, slots, report, standby)


def _write_plan(request: SweepRequest, plan, source: str, results_dir: Path, seed_round) -> None:
    """Settle the plan with the stored one, then (every check passed: only now) write it, and say what runs."""
    write_plan = settle_plan(plan, source, results_dir, replace=request.replace, merge=seed_round is not None,
                             seeding_round=None if seed_round is None else seed_round.record)
    if seed_round is None:  # once, not again for every round of --until-decided
        warn_short_warmup(plan.cells)
    write_plan()
    if not plan.studies:
        settle_sweep_code(results_dir, plan.name, [cell.run_id for cell in plan.cells], request.rerun_changed)
    _announce(plan, results_dir, request.optuna_storage)


def _run_here(request: SweepRequest, results_dir: Path, sweep: str, slots: list[str], report, standby) -> int:
    """Train the stored plan with local workers (the standby ones where they are alive)."""
    from experiments.backends.local import run_local
    from experiments.backends.local_workers import LocalWorkers

    workers = LocalWorkers(results_dir, sweep, slots, retries=request.retries, stale_after=request.stale_after,
                           heartbeat_every=request.heartbeat_every, optuna_storage=request.optuna_storage,
                           placement=request.layout.placement, keep_checkpoints=request.keep_checkpoints,
                           standby=standby)
    code = run_local(workers, progress=request.progress, report=report)
    print(closing_lines(results_dir, sweep))
    return code


def _announce(plan, results_dir: Path, optuna_storage: str | None) -> None:
    """Create a search's Optuna storage; say what is about to run."""
    import db

    if plan.studies:
        from experiments.search.runner import create_storage, default_storage

        create_storage(optuna_storage or default_storage(results_dir))
        confirm = f" + {plan.ablation.confirm_seeds} confirmation seeds" if plan.ablation.confirm_seeds else ""
        print(f"harness sweep: {plan.name}: {len(plan.studies)} searches of {plan.ablation.trials} trials{confirm} "
              f"({plan.ablation.sampler}, pruner {plan.ablation.pruner}) → {results_dir}", file=sys.stderr)
    else:
        finished = sum(1 for c in plan.cells if db.run_state(results_dir, c.run_id).result)
        print(f"harness sweep: {plan.name}: {len(plan.cells)} cells ({finished} already finished): {_shape(plan)} "
              f"→ {results_dir}", file=sys.stderr)


def _follow(request: SweepRequest, sweep: str, results_dir: Path) -> int:
    code = follow(request, sweep, results_dir, report_command(results_dir, sweep) if request.report else None)
    print(closing_lines(results_dir, sweep))
    return code


def warn_ignored(ablation, overrides: dict, request: SweepRequest) -> None:
    """A warning line for each flag this ablation makes meaningless (nothing it sets is used)."""
    if "lr" in overrides and ablation.lrs is not None:
        print(f"harness sweep: warning: --set lr={overrides['lr']:g} is ignored: the ablation sweeps "
              f"lrs={list(ablation.lrs)}, which set every cell's LR.", file=sys.stderr)
    if request.optuna_storage and ablation.tune is None:
        print("harness sweep: warning: --optuna-storage is ignored: the ablation has no search (tune=).",
              file=sys.stderr)


def warn_short_warmup(cells) -> None:
    """A warning line per warmup that never lets the LR reach its peak (TrainConfig.short_warmup_warning), saying
    in how many of the cells; printed once every check has passed (a refused launch prints its one error line)."""
    counts = Counter(cell.train.short_warmup_warning() for cell in cells)
    for warning, n in counts.items():
        if warning is not None:
            where = f"all {n} cells" if n == len(cells) else f"{n} of {len(cells)} cells"
            print(f"harness sweep: warning: in {where}, {warning}", file=sys.stderr)


def _shape(plan) -> str:
    """'4 arms × 4 LRs × 1 seed' (what the cells are made of; exclude= may leave out some combinations)."""
    counts = [(len(plan.arms), "arm"), (len({c.lr for c in plan.cells}), "LR"),
              (len({c.seed for c in plan.cells}), "seed")]
    return " × ".join(f"{n} {what}{'s' if n != 1 else ''}" for n, what in counts)


def stored_only(request: SweepRequest) -> bool:
    """Whether ABLATION names no library module and no file but a sweep in the store (a file-defined sweep
    asked for by its name, e.g. for --status from another directory)."""
    import db
    from experiments.declare.load import library_names

    name = request.ablation
    if name.endswith(".py") or Path(name).is_file() or name in library_names():
        return False
    return db.read_sweep_meta(db.resolve_results_dir(request.results), name) is not None


def report_command(results_dir: Path, sweep: str) -> list[str] | None:
    """The live report process's command (analysis.report.live), or None when analysis is not installed."""
    if importlib.util.find_spec("analysis") is None:
        return None
    return [sys.executable, "-m", "analysis.report.live", "--results", str(results_dir), "--sweep", sweep]


def closing_lines(results_dir: Path, sweep: str) -> str:
    """Where the results are and how to look at them."""
    import db

    report = db.sweep_dir(results_dir, sweep) / "report.html"
    lines = [f"results in {results_dir}"]
    if report.exists():
        lines.append(f"  report  {report}")
    lines.append(f"  query   harness db query --results {results_dir} \"select c.arm, c.lr, c.seed, r.status, "
                 "r.final_val_loss from sweep_cells c join runs r using (run_id) "
                 f"where c.sweep = '{sweep}' order by c.cell\"")
    return "\n".join(lines)


def show_status(results_dir: Path, sweep: str, retries: int, stale_after: float) -> int:
    """Print a sweep's progress from the store (it may be running on other machines)."""
    import db
    from experiments.workers.progress import ProgressReader, render

    try:
        progress = ProgressReader(results_dir, sweep, retries, stale_after).read()
    except db.DbError as err:
        raise ConfigError(str(err)) from None
    print("\n".join(render(sweep, progress)))
    for cell in progress.failed_cells:
        log = failed_cell_log(results_dir, cell.run_id) or f"under {db.sweep_dir(results_dir, sweep) / 'logs'}/"
        print(f"  failed: cell {cell.index} {cell.label} ({cell.run_id}); log {log}")
    return 0
