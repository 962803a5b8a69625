"""`harness report`: write a sweep's self-contained HTML report, or serve it on localhost with `--serve`.

The analysis packages are imported inside the handler so `harness --help` stays instant.
"""

from __future__ import annotations

import argparse

from cli.sweep_options import add_sweep_options


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "report", help="write a sweep's HTML report (summary table, figures, their SQL); --serve to view it live",
        description="One self-contained HTML file: the ablation's question, a sortable summary, every figure and "
        "the SQL behind it. While the sweep runs the page reloads itself and is labelled partial.",
    )
    add_sweep_options(parser)
    parser.add_argument("--out", metavar="FILE", help="where to write (default: <results>/sweeps/SWEEP/report.html)")
    parser.add_argument("--serve", action="store_true", help="then serve the page on localhost until Ctrl-C")
    parser.add_argument("--port", type=int, default=8765, help="port for --serve (default: 8765; 0 picks a free one)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Write the report and print its path; with --serve, keep serving it."""
    from analysis.report import write_report

    path = write_report(args.results, args.sweep, args.out, metric=args.metric, baseline=args.baseline, min_effect=args.min_effect)
    print(path, flush=True)
    if args.serve:
        from analysis.report.serve import make_server

        server = make_server(path, port=args.port)
        print(f"serving http://127.0.0.1:{server.server_address[1]}/{path.name} (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0
