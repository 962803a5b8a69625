"""`harness db`: query, list, export, compact and check the results store (`db/`), read-only except `compact` and
`check --repair`.

duckdb and pyarrow are imported inside the handlers so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse
import sys
import warnings

FORMATS = ("table", "csv", "json", "parquet")  # = db.render.FORMATS, without importing pyarrow for --help

# Columns keep their `runs` view names, so `--format json/csv` rows join back to the views; the text table shows
# commits abbreviated, as `git log --oneline` does (db.provenance.SHORT_COMMIT).
RUNS_SQL = """
SELECT run_id, sweep, arm, seed, status, last_step, final_val_loss, best_val_loss, diverged_at_step,
    harness_version, {git_commit}, git_dirty, code_versions, device_name
FROM runs ORDER BY sweep NULLS LAST, arm NULLS LAST, seed NULLS LAST, run_id
"""


def _add_results(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")


def _add_output(parser: argparse.ArgumentParser, default_format: str) -> None:
    parser.add_argument("--format", choices=FORMATS, default=default_format,
                        help=f"output format (default: {default_format})")
    parser.add_argument("--output", metavar="FILE", help="write here instead of stdout (required for parquet)")


def register(subparsers) -> None:
    parser = subparsers.add_parser("db", help="query the results store in SQL", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="db_command", metavar="DB_COMMAND")

    query = commands.add_parser("query",
                                help="run one read-only SQL query over the views runs, metrics, layer_metrics, events")
    query.add_argument("sql", help='e.g. "select arm, avg(final_val_loss) from runs group by arm"')
    _add_results(query)
    _add_output(query, "table")
    query.set_defaults(handler=_guarded(_query))

    runs = commands.add_parser("runs", help="one line per run: sweep, arm, seed, status, steps, val loss, the code and "
                               "device that made it")
    _add_results(runs)
    _add_output(runs, "table")
    runs.set_defaults(handler=_guarded(_runs))

    export = commands.add_parser("export", help="write one Parquet file per view into DIR")
    export.add_argument("dir", help="output directory (created if missing)")
    _add_results(export)
    export.set_defaults(handler=_guarded(_export))

    compact = commands.add_parser("compact", help="merge each finished run segment's shards into one file per table "
                                  "(one compaction at a time: a second one waits for the first)")
    _add_results(compact)
    compact.set_defaults(handler=_guarded(_compact))

    check = commands.add_parser("check", help="name every damaged or orphaned file of the store and what it affects; "
                                "--repair moves them aside (exit 0 clean, 1 found)")
    check.add_argument("--repair", action="store_true",
                       help="move what cannot be trusted to <results>/quarantine/<timestamp>/ (never deleted) and say "
                       "which runs the next `harness sweep` trains again")
    _add_results(check)
    check.set_defaults(handler=_guarded(_check))

    parser.set_defaults(handler=lambda args: parser.print_help() or 0)


def _one_line(err: Exception) -> str:
    """DuckDB's message without the echoed query and caret lines."""
    lines = []
    for line in str(err).splitlines():
        if line.startswith("LINE "):
            break
        if line.strip():
            lines.append(line.strip())
    return " ".join(lines)


def _guarded(handler):
    """Run `handler`, turning store and SQL errors into one line on stderr and exit code 2."""

    def run(args: argparse.Namespace) -> int:
        import duckdb

        import db

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", db.CorruptShardWarning)
            try:
                code = handler(args)
            except (db.DbError, duckdb.Error, OSError) as err:  # OSError: e.g. an unwritable --output
                print(f"harness db {args.db_command}: error: {_one_line(err)}", file=sys.stderr)
                code = 2
        for message in dict.fromkeys(str(warning.message) for warning in caught):  # a retry rescans: say each once
            print(f"harness db: warning: {message}", file=sys.stderr)
        return code

    return run


def _check_output(args: argparse.Namespace) -> None:
    """Refuse binary Parquet on a terminal before any query runs."""
    import db

    if args.format == "parquet" and not args.output:
        raise db.DbError("--format parquet needs --output FILE.")


def _emit(table, args: argparse.Namespace) -> int:
    from cli.output import stdout_reader_may_leave
    from db.render import write

    if args.output:
        with open(args.output, "wb") as sink:
            write(table, args.format, sink)
    else:
        with stdout_reader_may_leave():
            write(table, args.format, sys.stdout.buffer)
    return 0


def _query(args: argparse.Namespace) -> int:
    import db
    from db.readonly import read_only_relation
    from db.recover import run_recovering
    from db.render import to_arrow

    _check_output(args)
    results = db.resolve_results_dir(args.results)
    return _emit(run_recovering(results, lambda con: to_arrow(read_only_relation(con, args.sql, results), args.format)),
                 args)


def _runs(args: argparse.Namespace) -> int:
    from db.provenance import SHORT_COMMIT
    from db.recover import run_recovering
    from db.render import to_arrow

    _check_output(args)
    commit = f"left(git_commit, {SHORT_COMMIT}) AS git_commit" if args.format == "table" else "git_commit"
    sql = RUNS_SQL.format(git_commit=commit)
    return _emit(run_recovering(args.results, lambda con: to_arrow(con.sql(sql), args.format)), args)


def _export(args: argparse.Namespace) -> int:
    from db.export import export

    for path in export(args.results, args.dir):
        print(path)
    return 0


def _compact(args: argparse.Namespace) -> int:
    """Compact the store; a compaction already running (a sweep closing, another `harness db compact`) is waited
    for, with one line saying so, then this one finishes whatever is left: exit 0 either way."""
    import db
    from db.compact import compact

    results = db.resolve_results_dir(args.results)

    def waiting(holder: str) -> None:
        print(f"harness db compact: another compaction of {results} is running ({holder}); waiting for it to finish",
              file=sys.stderr, flush=True)

    merged = compact(results, on_wait=waiting)
    print(f"compacted {merged} run segment{'s' if merged != 1 else ''}")
    return 0


def _check(args: argparse.Namespace) -> int:
    """One line per damaged or orphaned file; with --repair, each move and what a rerun trains again. Exit 0 when
    the store is clean, 1 when something was found (moved aside or not)."""
    import db
    from db.check import check_store, report_line
    from db.quarantine import repair

    results = db.resolve_results_dir(args.results)
    check = check_store(results)
    for finding in check.findings:
        print(report_line(check, finding))
    damaged = sum(1 for f in check.findings if not f.orphan)
    orphaned = len(check.findings) - damaged
    if not check.findings:
        print(f"{results}: {check.checked} files checked, none damaged or orphaned")
        return 0
    print(f"{results}: {check.checked} files checked, {damaged} damaged, {orphaned} orphaned"
          + ("" if args.repair else "; `harness db check --repair` moves them aside"))
    if args.repair:
        done = repair(check)
        for source, target in done.moved:
            print(f"moved {source} to {target}")
        for line in done.retrain:
            print(line)
    return 1
