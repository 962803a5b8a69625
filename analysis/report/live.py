"""The live dashboard's writer: a long-lived, low-priority process that rewrites a sweep's report each time
its runner says a cell finished.

    python -m analysis.report.live --results DIR --sweep NAME

Protocol: the runner writes one line to stdin per finished cell. Imports happen once, at start. A rewrite
starts as soon as a line arrives; lines that arrive during a rewrite are answered by the next one, so every
finished cell is followed by a rewrite that read the store after it finished. After each rewrite one line
goes to stdout: `wrote <lines answered so far> partial|finished` (what the page shows) or
`failed <lines answered so far> <message>`. At end of input the runner has ended: if the last page showed
cells waiting and none training, it is drawn once more as interrupted (it stops reloading). Then the process
exits, and only then: it ignores SIGINT and SIGTERM, which reach it with the runner's
process group, so that the runner can still ask for a last rewrite after a Ctrl-C. It runs at nice `NICE`
in the runner's session (a session of its own would be a scheduler autogroup of its own, where nice counts
for nothing against the workers), so it takes only the CPU the workers leave. A log line per rewrite goes to
stderr: `<UTC time> report: 12 of 24 cells; partial in 2.3 s → <page>`.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timezone

NICE = 10
CHUNK = 65536


def requests(fd: int) -> Iterator[int]:
    """Each time at least one line has arrived on `fd`: how many arrived (everything readable without waiting).
    Ends at end of input."""
    while True:
        chunk = os.read(fd, CHUNK)  # blocks until the runner says something
        if not chunk:
            return
        count = chunk.count(b"\n")
        while select.select([fd], [], [], 0)[0]:
            more = os.read(fd, CHUNK)
            if not more:
                break
            count += more.count(b"\n")
        if count:
            yield count


def log(message: str) -> None:
    """One line of the report log: when (UTC, when the rewrite ended), then what."""
    print(f"{datetime.now(timezone.utc).isoformat(timespec='milliseconds')} report: {message}", file=sys.stderr, flush=True)


def serve(results_dir: str, sweep: str, fd: int = 0, answers=None) -> None:
    """Answer the runner's lines on `fd` with rewrites until end of input (see the module docstring);
    the answers go to `answers` (default: stdout)."""
    from analysis.report.write import default_path, render_report, write_page

    answers = answers or sys.stdout
    out = default_path(results_dir, sweep)
    answered, last = 0, None
    for count in requests(fd):
        answered += count
        started = time.monotonic()
        try:
            last = render_report(results_dir, sweep, runner=True)  # the runner is alive while it writes to us
            write_page(last.page(), out)
        except Exception as error:  # the report is a view: say why, keep answering
            message = " ".join(f"{type(error).__name__}: {error}".split())
            log(f"failed after {time.monotonic() - started:.1f} s: {message}")  # logged before the answer: a runner
            print(f"failed {answered} {message}", file=answers, flush=True)  # that got the answer finds the line
            last = None
            continue
        log(f"{last.info.progress()} in {time.monotonic() - started:.1f} s → {out}")
        print(f"wrote {answered} {'partial' if last.info.running else 'finished'}", file=answers, flush=True)
    if last is not None and last.info.running and not last.info.counts.get("running"):
        stopped = last.stopped()  # the runner has ended with cells left, and no cell trains: nothing will rewrite it
        write_page(stopped.page(), out)
        log(f"{stopped.info.state}: {stopped.info.progress()}; the page no longer reloads → {out}")


def one_thread_per_library() -> None:
    """One thread for BLAS and OpenMP (set before numpy is imported): a rewrite that ran on every core at once
    would stall each worker's threads together (OpenMP threads wait for each other at every operation)."""
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = "1"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", required=True)
    parser.add_argument("--sweep", required=True)
    args = parser.parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    os.nice(NICE)
    one_thread_per_library()
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr  # stdout carries the answers only: anything a library prints goes to the log
    import analysis.report.write  # noqa: F401  the imports (pandas, matplotlib, scipy: seconds) before the first line
    import analysis.plots  # noqa: F401
    import analysis.summary  # noqa: F401

    serve(args.results, args.sweep, answers=answers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
