"""`harness report`: write a sweep's self-contained HTML report, or serve it with `--serve`.

The analysis packages are imported inside the handler so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cli.serve_options import add_serve_options, serve_until_interrupted
from cli.sweep_options import add_sweep_options


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write a sweep's HTML report (the answer, tables, interactive figures, their SQL); "
        "--serve to view it live",
        description="One self-contained HTML file: the ablation's question and its answer, a compact per-arm table, "
        "the comparison by arm and LR, interactive figures and the SQL behind each. While the sweep runs the page "
        "reloads itself.",
    )
    add_sweep_options(parser)
    parser.add_argument("--out", metavar="FILE", help="where to write (default: <results>/sweeps/SWEEP/report.html)")
    parser.add_argument("--serve", action="store_true",
                        help="then serve the page until Ctrl-C (`harness dashboard` serves every sweep)")
    add_serve_options(parser, "the page with --serve")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Bind the port first (with --serve), so a bad or busy port is refused before the report is rewritten;
    then write the report and print its path; with --serve, keep serving it."""
    from analysis.report.serve import check_port, make_server
    from analysis.report.write import default_path
    from cli.out_path import check_out_path

    if args.out:
        check_out_path("--out", args.out)
    path = Path(args.out) if args.out else default_path(args.results, args.sweep)
    if not args.serve:
        print(_write(args, path), flush=True)
        return 0
    check_port(args.port)
    server = make_server(path, args.host, args.port)
    try:
        _write(args, path)
    except BaseException:
        server.server_close()
        raise
    print(path, flush=True)
    serve_until_interrupted(server, path.name)
    return 0


def _write(args: argparse.Namespace, path: Path) -> Path:
    """Write the report to `path`; a path that turns out unwritable (the store's own folder for the default one,
    which is not created before the sweep is known) is one line."""
    from analysis.report import write_report
    from errors import ConfigError

    try:
        return write_report(args.results, args.sweep, path, metric=args.metric, baseline=args.baseline,
                            min_effect=args.min_effect)
    except OSError as err:
        if err.filename is None or not Path(path).absolute().is_relative_to(Path(err.filename).absolute().parent):
            raise  # not about where the report goes
        flag = "--out" if args.out else "the report (default --out)"
        raise ConfigError(f"{flag} {str(path)!r} cannot be written: {err}.") from None
