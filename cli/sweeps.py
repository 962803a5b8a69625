"""`harness sweeps`: every sweep in the results store with its progress and tags (from the `sweeps` view and each
sweep's labels, db/labels.py), archived ones only with `--archived`; with a sweep name, `--tag`/`--untag` and
`--archive`/`--unarchive` change its labels, and `--history` lists the plans it has had (each replaced one, and
what the next one changed)."""

from __future__ import annotations

import argparse
from typing import Sequence

COLUMNS = ["sweep", "n_cells", "completed", "diverged", "failed", "damaged", "running", "pending", "question"]
HEADERS = ["sweep", "cells", "completed", "diverged", "failed", "damaged", "running", "left", "tags", "question"]


def register(subparsers) -> None:
    """Add `harness sweeps` to the CLI."""
    parser = subparsers.add_parser("sweeps", help="list the sweeps in the results store, their progress and tags; tag "
                                   "or archive one")
    parser.add_argument("sweep", nargs="?", metavar="SWEEP", help="the sweep whose plans to list (--history) or whose "
                        "labels to change")
    parser.add_argument("--history", action="store_true",
                        help="list SWEEP's plans: the current one and each one `harness sweep --replace` replaced")
    parser.add_argument("--tag", action="append", default=[], metavar="TAG", help="add a tag to SWEEP (repeatable)")
    parser.add_argument("--untag", action="append", default=[], metavar="TAG",
                        help="remove a tag from SWEEP (repeatable)")
    archive = parser.add_mutually_exclusive_group()
    archive.add_argument("--archive", dest="archived", action="store_const", const=True,
                         help="hide SWEEP from this listing and the dashboard's index (nothing is deleted)")
    archive.add_argument("--unarchive", dest="archived", action="store_const", const=False, help="show SWEEP again")
    parser.add_argument("--archived", dest="show_archived", action="store_true", help="list archived sweeps too")
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    parser.set_defaults(handler=sweeps)


def _labelling(args: argparse.Namespace) -> bool:
    return bool(args.tag or args.untag or args.archived is not None)


def sweeps(args: argparse.Namespace) -> int:
    import warnings

    import db
    from cli.table import render_table
    from db.labels import every_label
    from errors import ConfigError

    if _labelling(args):
        return label(args)
    if args.history or args.sweep is not None:
        return history(args)
    with warnings.catch_warnings():  # each damaged file is one line below, from `store_damage`
        warnings.simplefilter("ignore", db.CorruptShardWarning)
        try:
            con = db.connect(args.results)
        except db.DbError as err:
            raise ConfigError(str(err)) from None
    labels, damaged = every_label(db.resolve_results_dir(args.results))
    rows = con.execute(f"SELECT {', '.join(COLUMNS)} FROM sweeps ORDER BY sweep").fetchall()
    archived = [row for row in rows if row[0] in labels and labels[row[0]].archived]
    shown = rows if args.show_archived else [row for row in rows if row not in archived]
    if shown:
        headers = HEADERS + (["archived"] if args.show_archived else [])
        tags = {name: ", ".join(found.tags) for name, found in labels.items()}
        print(render_table(headers, [[*row[:-1], tags.get(row[0], ""), row[-1] or "",
                                      *(["yes" if row in archived else ""] if args.show_archived else [])]
                                     for row in shown]))
    elif not rows:
        print("no sweeps yet: run one with `harness sweep ABLATION` (see `harness ablations`).")
    if archived and not args.show_archived:
        plural = "s" if len(archived) != 1 else ""
        print(f"{len(archived)} archived sweep{plural} not shown (`harness sweeps --archived` lists them).")
    warn_damage(con, "harness sweeps", damaged)
    return 0


def label(args: argparse.Namespace) -> int:
    """Change SWEEP's tags and archive state, and say what they are now."""
    import db
    from db.labels import relabel
    from errors import ConfigError, closest

    if args.sweep is None or args.history:
        raise ConfigError("--tag, --untag, --archive and --unarchive change one sweep's labels: give its name "
                          "(`harness sweeps SWEEP --tag T`), and no --history.")
    results = db.resolve_results_dir(args.results)
    known = _sweep_names(results)
    if args.sweep not in known:
        hint = closest(args.sweep, known)
        raise ConfigError(f"no sweep {args.sweep!r} in {results}" + (f"; did you mean {hint!r}?" if hint else
                                                                      " (`harness sweeps` lists them)."))
    try:
        labels = relabel(results, args.sweep, add=args.tag, remove=args.untag, archived=args.archived)
    except db.DbError as err:
        raise ConfigError(str(err)) from None
    tags = ", ".join(labels.tags) or "none"
    state = ("archived: hidden from `harness sweeps` and the dashboard's index (`--unarchive` shows it again)"
             if labels.archived else "shown")
    print(f"sweep {args.sweep}: tags {tags}; {state}.")
    return 0


def _sweep_names(results) -> list[str]:
    """Every sweep of the store (the `sweeps` view); ConfigError for a store that cannot be read."""
    import warnings

    import db
    from errors import ConfigError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.CorruptShardWarning)
        try:
            return [name for (name,) in db.connect(results).execute("SELECT sweep FROM sweeps").fetchall()]
        except db.DbError as err:
            raise ConfigError(str(err)) from None


def warn_damage(con, command: str, labels: Sequence[str] = ()) -> None:
    """A warning line on stderr per damaged file of the store (`store_damage`): what it is and what it costs; and
    one per damaged labels file (`labels`: db.labels.every_label's lines)."""
    import sys

    sys.stdout.flush()  # the table first, where both go to one terminal
    for path, kind, problem, run_id, sweep in con.execute("SELECT * FROM store_damage").fetchall():
        cost = f"sweep {sweep!r} is left out" if sweep is not None else f"run {run_id} shows as damaged"
        print(f"{command}: warning: {path} ({kind}) is damaged: {problem}; {cost} (`harness db check`)",
              file=sys.stderr)
    for line in labels:
        print(f"{command}: warning: {line}; its sweep is listed without tags", file=sys.stderr)


def history(args: argparse.Namespace) -> int:
    """The sweep's plans, oldest first, each with what the plan after it changed."""
    import db
    from cli.table import render_table
    from errors import ConfigError
    from experiments.plan.identity import plan_change

    if args.sweep is None or not args.history:
        raise ConfigError("give a sweep name and --history (`harness sweeps SWEEP --history`), or labels to change "
                          "(`--tag T`, `--untag T`, `--archive`, `--unarchive`), or neither.")
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
    return [[f"  until-decided round {r['round']}", "", "", "",
             f"seeds up to {r['seeds']} per arm and LR, where undecided "
             f"(--max-seeds {r['max_seeds']}, --seed-batch {r['seed_batch']})"] for r in rounds]


