"""`harness dashboard`: every sweep of a results store in the browser: an index with each sweep's question and
progress, each sweep's live report, two sweeps side by side. Standard library HTTP; analysis is imported in the
handler so `harness --help` stays instant."""

from __future__ import annotations

import argparse

from cli.serve_options import add_serve_options, serve_until_interrupted


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "dashboard", help="serve every sweep of a results store: an index, each sweep's live report, two side by side",
        description="An index of every sweep (question, progress, running/interrupted/finished), each sweep's report "
        "rendered on request (it reloads while the sweep runs), and two sweeps side by side, until Ctrl-C.",
    )
    parser.add_argument("--results", metavar="DIR",
                        help="results directory (default: $HARNESS_RESULTS, else ./results)")
    add_serve_options(parser, "the dashboard")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check the store and bind the port (one line and exit 2 for either), then serve until Ctrl-C."""
    import db
    from analysis.errors import AnalysisError
    from analysis.report.dashboard import make_dashboard
    from analysis.report.serve import check_port

    check_port(args.port)
    results = db.resolve_results_dir(args.results)
    try:
        db.connect(results)
    except db.DbError as err:
        raise AnalysisError(str(err)) from err
    serve_until_interrupted(make_dashboard(results, args.host, args.port))
    return 0
