"""`harness run`: train one arm from a preset or a config file, with telemetry into the results store.

Everything is validated (configs, cross-config rules, data source, corpus, run id) before the model is
built; torch and Lightning are imported only after that.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import time
from pathlib import Path

from cli.rerun_changed import add_option as add_rerun_changed
from errors import ConfigError


def register(subparsers) -> None:
    """Add `harness run` to the CLI."""
    parser = subparsers.add_parser(
        "run",
        help="train one arm and record its telemetry in the results store",
        description="Train a model (preset or config file) with full stability telemetry. See docs/training.md.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--preset", metavar="NAME", help="a preset from `harness presets`")
    source.add_argument(
        "--config", metavar="FILE.py", type=Path,
        help="a Python file defining `model` (ModelConfig) and optionally `train` (TrainConfig), `data` (DataConfig)",
    )
    parser.add_argument(
        "--set", dest="overrides", action="append", default=[], metavar="FIELD=VALUE",
        help="set any ModelConfig, TrainConfig or DataConfig field (repeatable), e.g. --set lr=3e-3 --set "
        "qk_norm=rmsnorm",
    )
    parser.add_argument("--steps", type=int, metavar="N", help="optimizer steps (same as --set steps=N)")
    parser.add_argument("--data", metavar="SOURCE", help="'default', a local file/dir/glob, or a hub dataset name")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.add_argument("--run-id", metavar="ID", help="run id (default: content hash of the three configs)")
    parser.add_argument(
        "--resume", action="store_true",
        help="continue an interrupted or crashed run (same configs, so the same run id) from its last checkpoint; "
        "a run with no checkpoint yet starts again from step 0",
    )
    parser.add_argument("--sweep", metavar="NAME",
                        help="label the run with a sweep name (groups hand-made runs in `runs` and `sweep_cells`)")
    parser.add_argument("--arm", metavar="NAME", help="label the run with an arm name within --sweep")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (e.g. in batch jobs)")
    add_keep_checkpoints(parser)
    add_rerun_changed(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Validate, prepare data, train, print the closing summary. A diverged run is a result: exit 0."""
    started = time.perf_counter()
    import db
    from cli.rerun_changed import warn_resume
    from cli.run_checks import check_results_dir, check_resumable, check_run_id_free
    from cli.run_config import resolve_configs, warn_small_tokenizer
    from harness.data import prepare

    configs = resolve_configs(args.preset, args.config, args.overrides, args.steps, args.data).check()
    model, train, data = configs
    check_labels(args.sweep, args.arm)
    results_dir = Path(db.resolve_results_dir(args.results))
    check_results_dir(results_dir)
    warn_planned_sweep(results_dir, args.sweep)
    run_id = args.run_id or configs.key()
    retire = None  # the stored run that --rerun-changed archives before training
    if args.resume:
        if args.rerun_changed:
            raise ConfigError("--resume and --rerun-changed: give one (--rerun-changed trains the run again from "
                              "step 0).")
        check_resumable(results_dir, run_id, model, train)
        warn_resume(results_dir, run_id)
    else:
        retire = check_run_id_free(results_dir, run_id, args.rerun_changed)
    prepared = prepare(data, model.vocab_size)
    warn_small_tokenizer(model.vocab_size, prepared.tokenizer_vocab_size)
    from harness.train.lightning_import import import_lightning

    import_lightning()  # torch and Lightning from here on, without what only torchmetrics' metrics would use
    from harness.train.run import RunSpec, check_run_inputs, train_run

    check_run_inputs(prepared, train)
    if train.short_warmup_warning():  # legal input, said once every check has passed
        print(f"harness run: warning: {train.short_warmup_warning()}", file=sys.stderr)
    if retire is not None:
        for entry in retire():
            print(f"harness run: {run_id}: its run made by other code moved to {entry}; training it again.",
                  file=sys.stderr)
    spec = RunSpec(model, train, data, results_dir, run_id, resume=args.resume, sweep=args.sweep, arm=args.arm,
                   keep_checkpoints=args.keep_checkpoints)
    print(f"harness run: {run_id} → {results_dir} (setup {time.perf_counter() - started:.1f} s)", file=sys.stderr)
    outcome = train_run(spec, prepared, progress=not args.no_progress)
    if outcome.interrupted is not None:
        return report_interrupted(outcome, run_id)
    print(render_summary(outcome, results_dir))
    return 0


def add_keep_checkpoints(parser) -> None:
    """--keep-checkpoints, shared by `harness run` and `harness sweep`."""
    from harness.train.checkpoints import KEEP_CHECKPOINTS  # torch-free

    parser.add_argument("--keep-checkpoints", choices=KEEP_CHECKPOINTS, default="last",
                        help="last: a run keeps its newest checkpoint only (the result's, for `harness sample`; "
                        "default); all: every periodic one too; none: removed once the run has a result (never while "
                        "it can resume)")


def warn_planned_sweep(results_dir: Path, sweep: str | None) -> None:
    """A run labelled with a sweep that has a plan is no cell of it: say so (sweep_cells and compare show only
    a planned sweep's cells)."""
    import db

    if sweep is not None and db.read_sweep_meta(results_dir, sweep) is not None:
        print(f"harness run: warning: sweep {sweep!r} has a plan (from `harness sweep`); this run is not one of its "
              "cells, so `sweep_cells`, `harness compare` and the report leave it out (--sweep only labels it in "
              "`runs`). Add cells to a planned sweep through its ablation.", file=sys.stderr)


def check_labels(sweep: str | None, arm: str | None) -> None:
    """--arm only means something within a sweep, and both become plain labels in the store."""
    import db
    from db.sweeps import check_sweep_name

    if arm is not None and sweep is None:
        raise ConfigError("--arm needs --sweep: an arm is a member of a sweep (e.g. --sweep my-qk --arm rmsnorm).")
    if sweep is not None:
        try:
            check_sweep_name(sweep)
        except db.DbError as err:
            raise ConfigError(f"--sweep: {err}") from None
    if arm is not None and not arm.strip():
        raise ConfigError("--arm '' is invalid: give the arm a name.")


def report_interrupted(outcome, run_id: str) -> int:
    """A requested stop (Ctrl-C, SIGTERM): say where the checkpoint is and how to continue; exit 128 + signal."""
    stop = outcome.interrupted
    argv = sys.argv[1:] if sys.argv[1:2] == ["run"] else ["run", *sys.argv[1:]]
    again = ["harness", *argv, *([] if "--resume" in argv else ["--resume"])]  # same configs: the same run id
    print(
        f"run {run_id}: interrupted by {signal.Signals(stop.signum).name} at step {stop.step}; checkpoint written to "
        f"{outcome.checkpoint_dir}\n  continue with: {shlex.join(again)}",
        file=sys.stderr,
    )
    return 128 + stop.signum


def _number(value, spec: str = ".4f") -> str:
    return "n/a" if value is None else format(value, spec)


def render_summary(outcome, results_dir: Path) -> str:
    """The closing summary: how the run ended, its key signals, and how to query it."""
    s = outcome.summary
    status = s["status"] if s["diverged_at_step"] is None else f"diverged at step {s['diverged_at_step']}"
    lines = [
        f"run {outcome.run_id}: {status}",
        f"  steps {s['steps']}   train loss {_number(s['final_train_loss'])}   val loss {_number(s['val_loss'])}",
        f"  spikes: loss {s['loss_spikes']} ({s['loss_spike_score']:.2f}%), grad norm {s['grad_norm_spikes']} "
        f"({s['grad_norm_spike_score']:.2f}%)",
        f"  max attention logit {_number(s['max_attention_logit'], '.4g')}   max |output logit| "
        f"{_number(s['max_output_logit'], '.4g')}   attention: {s['attention_paths']}",
        f"  params {s['params']:,}   tokens {s['tokens'] or 0:,}   {s['tokens_per_second']:,.0f} tokens/s",
        f"  results {results_dir}   checkpoints {outcome.checkpoint_dir}",
        f"  query:  harness db query --results {results_dir} \"select step, value from metrics "
        f"where run_id = '{outcome.run_id}' and name = 'train_loss' order by step\"",
    ]
    return "\n".join(lines)
