"""The live dashboard's writer: a long-lived process that rewrites a sweep's report each time its runner says a
cell finished, and draws the last page when the runner ends.

    python -m analysis.report.live --results DIR --sweep NAME

Protocol: the runner writes lines to stdin.
- `cell`: a cell finished. A partial page is drawn as soon as a line arrives; lines that arrive while it is
  drawn are answered by the next one, so every finished cell is followed by a page that read the store after
  it finished.
- `hold`: the runner is about to compact the store: a partial page being drawn is abandoned (its lines are
  answered by the next page) and nothing reads the store until the next line; answered `held <answered>`.
- `last`: the runner is ending: a partial page being drawn is abandoned and the page is drawn as it will stay
  (the runner known to have ended: a sweep with cells waiting and none training reads as interrupted and stops
  reloading).
After each page one line goes to stdout: `wrote <lines answered so far> partial|finished` (what the page
shows) or `failed <lines answered so far> <message>`. At end of input without `last` the runner has died: a
partial page in flight is abandoned, and if the last page showed cells waiting and none training it is drawn
once more as interrupted. Then the process exits, and only then: it ignores SIGINT and SIGTERM, which reach it
with the runner's process group, so that the runner can still ask for a last page after a Ctrl-C.

Priorities (analysis.report.live_pages): the imports (seconds, once, when the process starts: after a cell's
first step) and the last page run at normal priority, so that a sweep's close does not wait for them behind
the workers; partial pages are drawn by forked children at nice `NICE` in the runner's session (a session of
its own would be a scheduler autogroup of its own, where nice counts for nothing against the workers), so they
take only the CPU the workers leave. A log line per page goes to stderr:
`<UTC time> report: 12 of 24 cells; partial in 2.3 s → <page>`.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys

from analysis.report.live_pages import PartialPage, draw

CHUNK = 65536


class Lines:
    """The runner's lines on `fd`, split as they arrive; `ended` at end of input."""

    def __init__(self, fd: int) -> None:
        self.fd, self.ended, self._rest = fd, False, b""

    def read(self) -> list[str]:
        """The complete lines readable without waiting (call when `fd` is readable)."""
        lines: list[str] = []
        while not self.ended and select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, CHUNK)
            if not chunk:
                self.ended = True
                break
            *complete, self._rest = (self._rest + chunk).split(b"\n")
            lines += [line.decode(errors="replace").strip() for line in complete]
        return lines


class LivePages:
    """The report process's state: lines waiting for a page, the partial page being drawn, what the last page
    showed. `forking` ends once a page is drawn in this process (it then holds DuckDB's threads: no more forks)."""

    def __init__(self, results_dir: str, sweep: str, answers) -> None:
        from analysis.report.write import default_path

        self.results_dir, self.sweep, self.answers = results_dir, sweep, answers
        self.out = default_path(results_dir, sweep)
        self.waiting = self.answered = 0
        self.partial: PartialPage | None = None  # the PartialPage being drawn
        self.held = False
        self.forking = True
        self.shown = None  # the last page's Drawn
        self.stays = False  # the last page was drawn as it stays (the runner known to have ended)

    def request(self, line: str) -> None:
        """One line of the runner's (anything but `hold` and `last` counts as `cell`)."""
        if line == "hold":
            self._abandon()
            self.held = True
            self._say(f"held {self.answered}")
            return
        self.waiting += 1
        self.held = False
        if line == "last":
            self._abandon()
            self._draw_here()

    def start_due(self) -> None:
        """Start drawing a partial page for the lines waiting, unless one is being drawn or the store is held."""
        if self.partial is not None or not self.waiting or self.held:
            return
        if not self.forking:
            return self._draw_here(runner=True)
        self.partial = PartialPage(self.results_dir, self.sweep, self.out, self.waiting)
        self.waiting = 0

    def partial_done(self) -> None:
        """Answer the lines of the partial page just drawn (its child has answered or died)."""
        partial, self.partial = self.partial, None
        if partial is not None:  # called only while one is drawn
            self._answer(partial.lines, partial.outcome(), stays=False)

    def ended(self) -> None:
        """End of input: the runner is gone (see the module docstring)."""
        self._abandon()
        if self.waiting or (not self.stays and self.shown is not None and self.shown.idle):
            self._draw_here()

    def _abandon(self) -> None:
        if self.partial is not None:
            self.partial.abandon()
            self.waiting += self.partial.lines
            self.partial = None

    def _draw_here(self, runner: bool = False) -> None:
        self.forking = False
        lines, self.waiting = self.waiting, 0
        self._answer(lines, draw(self.results_dir, self.sweep, self.out, runner=runner), stays=not runner)

    def _answer(self, lines: int, drawn, stays: bool) -> None:
        self.answered += lines
        if drawn.kind != "failed":  # a failed page left the last one in place
            self.shown, self.stays = drawn, stays
        if lines:
            verb = "failed" if drawn.kind == "failed" else "wrote"
            self._say(f"{verb} {self.answered} {drawn.message or drawn.kind}")

    def _say(self, answer: str) -> None:
        try:
            print(answer, file=self.answers, flush=True)
        except OSError:  # the runner is gone: nobody waits for this answer
            pass


def serve(results_dir: str, sweep: str, fd: int = 0, answers=None) -> None:
    """Answer the runner's lines on `fd` until end of input (see the module docstring); the answers go to
    `answers` (default: stdout)."""
    pages = LivePages(results_dir, sweep, answers or sys.stdout)
    lines = Lines(fd)
    while not lines.ended:
        watched = [fd] + ([pages.partial.fd] if pages.partial is not None else [])
        ready = select.select(watched, [], [])[0]
        if pages.partial is not None and pages.partial.fd in ready:
            pages.partial_done()
        if fd in ready:
            for line in lines.read():
                pages.request(line)
        if not lines.ended:
            pages.start_due()
    pages.ended()


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
    one_thread_per_library()
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    sys.stdout = sys.stderr  # stdout carries the answers only: anything a library prints goes to the log
    import analysis.plots  # noqa: F401
    import analysis.report.write  # noqa: F401  the imports (pandas, matplotlib, scipy: seconds) before the first line
    import analysis.summary  # noqa: F401

    serve(args.results, args.sweep, answers=answers)
    try:
        answers.flush()
    except OSError:  # the runner is gone (killed): nobody reads the answers, and that is no error of ours
        pass
    sys.stderr.flush()
    os._exit(0)  # no interpreter teardown (pandas, scipy, matplotlib: 0.2-0.4 s) on the sweep's closing path


if __name__ == "__main__":
    sys.exit(main())
