"""`harness sweeps`: every sweep in the results store with its progress (from the `sweeps` view); with a sweep
name and `--history`, the plans that sweep has had (each replaced one, and what the next one changed)."""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    """Add `harness sweeps` to the CLI."""
    parser = subparsers.add_parser("sweeps", help="list the sweeps in the results store and their progress")
    parser.add_argument("sweep", nargs="?", metavar="SWEEP", help="with --history: the sweep whose plans to list")
    parser.add_argument("--history", action="store_true",
                        help="list SWEEP's plans: the current one and each one `harness sweep --replace` replaced")
    parser.add_argument("--results", metavar="DIR", help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.set_defaults(handler=sweeps)


def sweeps(args: argparse.Namespace) -> int:
    import warnings

    import db
    from cli.table import render_table
    from errors import ConfigError

    if args.history or args.sweep is not None:
        return history(args)
    with warnings.catch_warnings():  # each damaged file is one line below, from `store_damage`
        warnings.simplefilter("ignore", db.CorruptShardWarning)
        try:
            con = db.connect(args.results)
        except db.DbError as err:
            raise ConfigError(str(err)) from None
    columns = ["sweep", "n_cells", "completed", "diverged", "failed", "damaged", "running", "pending", "question"]
    rows = con.execute(f"SELECT {', '.join(columns)} FROM sweeps ORDER BY sweep").fetchall()
    if rows:
        headers = ["sweep", "cells", "completed", "diverged", "failed", "damaged", "running", "left", "question"]
        print(render_table(headers, [[*row[:-1], row[-1] or ""] for row in rows]))
    else:
        print("no sweeps yet: run one with `harness sweep ABLATION` (see `harness ablations`).")
    warn_damage(con, "harness sweeps")
    return 0


def warn_damage(con, command: str) -> None:
    """A warning line on stderr per damaged file of the store (`store_damage`): what it is and what it costs."""
    import sys

    sys.stdout.flush()  # the table first, where both go to one terminal
    for path, kind, problem, run_id, sweep in con.execute("SELECT * FROM store_damage").fetchall():
        cost = f"sweep {sweep!r} is left out" if sweep is not None else f"run {run_id} shows as damaged"
        print(f"{command}: warning: {path} ({kind}) is damaged: {problem}; {cost} (`harness db check`)",
              file=sys.stderr)


def history(args: argparse.Namespace) -> int:
    """The sweep's plans, oldest first, each with what the plan after it changed."""
    import db
    from cli.table import render_table
    from errors import ConfigError
    from experiments.plan.identity import plan_change

    if args.sweep is None or not args.history:
        raise ConfigError("give a sweep name and --history (`harness sweeps SWEEP --history`), or neither.")
    results = db.resolve_results_dir(args.results)
    current = db.read_sweep_meta(results, args.sweep)
    if current is None:
        raise ConfigError(f"no sweep {args.sweep!r} with a plan in {results} (`harness sweeps` lists them).")
    folder = db.sweep_dir(results, args.sweep)
    plans = [(f"replaced {m['replaced']}", m, folder / "history" / f"{m['replaced']:04d}")
             for m in db.plan_history(results, args.sweep)] + [("current", current, folder)]
    rows = []
    for (label, meta, where), following in zip(plans, [*plans[1:], None]):
        changed = ""
        if following is not None:
            change = plan_change(meta, db.read_plan_at(where, args.sweep), following[1],
                                 db.read_plan_at(following[2], args.sweep))
            changed = change.refusal() or ("" if change.same else change.extension())
        rows.append([label, meta.get("created_at", "")[:19], meta.get("n_cells"), meta.get("source") or "", changed])
    rows += _seeding_rows(current)
    print(render_table(["plan", "created", "cells", "source", "changed by the next plan"], rows))
    return 0


def _seeding_rows(meta: dict) -> list[list]:
    """The rounds in which --until-decided added seeds to the current plan, one row each."""
    rounds = (meta.get("seeding") or {}).get("rounds", [])
    return [[f"  until-decided round {r['round']}", "", "", "", f"seeds up to {r['seeds']} per arm and LR, where undecided "
             f"(--max-seeds {r['max_seeds']}, --seed-batch {r['seed_batch']})"] for r in rounds]


