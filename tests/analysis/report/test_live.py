"""The report process (`python -m analysis.report.live`, run as the runner runs it): its reading of the runner's
lines, partial pages drawn by a child at low priority, the last page drawn at once when the runner ends (a
partial page in flight abandoned, its temp file removed), `hold` before a compaction, and the page left as
interrupted when the runner dies."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import db
import synthetic
from analysis.report.live import Lines
from report_children import children, gone, starve

pytestmark = pytest.mark.slow  # waits on processes or builds a shared store first


def test_lines_waiting_together_are_read_at_once_split_across_chunks_and_end_of_input_ends():
    read, write = os.pipe()
    lines = Lines(read)
    os.write(write, b"cell\ncell\nla")
    assert lines.read() == ["cell", "cell"] and not lines.ended
    threading.Timer(0.2, lambda: (os.write(write, b"st\n"), os.close(write))).start()
    time.sleep(0.4)
    assert lines.read() == ["last"] and lines.ended
    os.close(read)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Sweep 'qk', finished (4 runs); sweep 'cut', one finished run and one cell that never started."""
    path = tmp_path_factory.mktemp("live") / "results"
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.002, 2), "rmsnorm": (-0.1, 0.002, 2)}, steps=12)
    synthetic.write_run(path, "d0", sweep="cut", arm="base", seed=0, lr=1e-3, final=3.0, steps=12)
    db.write_sweep(path, "cut", {}, [{"arm": "base", "lr": 1e-3, "seed": s, "run_id": f"d{s}"} for s in range(2)])
    return path


class ReportProcess:
    """The report process, started as the runner starts it (stdin, stdout and a log)."""

    def __init__(self, results: Path, sweep: str, log: Path) -> None:
        self.page = results / "sweeps" / sweep / "report.html"
        self.log = log
        with open(log, "w") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "analysis.report.live", "--results", str(results), "--sweep", sweep],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sink, text=True, bufsize=1)

    def send(self, line: str) -> None:
        self.process.stdin.write(f"{line}\n")
        self.process.stdin.flush()

    def answer(self) -> str:
        return self.process.stdout.readline().strip()

    def rewrites(self) -> list[str]:
        return [line.split(" ", 1)[1] for line in self.log.read_text().splitlines() if " report: " in line]

    def end(self) -> int:
        self.process.stdin.close()
        return self.process.wait(timeout=60)


def test_a_partial_page_is_drawn_by_a_niced_child_and_the_last_page_abandons_one_in_flight(results, tmp_path):
    report = ReportProcess(results, "qk", tmp_path / "report.log")
    report.send("cell")
    child = starve(report.process.pid)  # a partial page the workers starve, still unwritten when the runner ends
    mine = report.page.parent / f".report.html.{child}-abcd1234.tmp"  # as if it had begun writing
    other = report.page.parent / ".report.html.xyz1234a.tmp"  # another writer's (`harness report` on the same page)
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text("half a page")
    other.write_text("someone else's page")
    report.send("last")
    assert report.answer() == "wrote 2 finished"  # both lines answered by the last page (waiting on the stopped
    # child instead would never end: the hang guard's timeout)
    assert gone(child) and not mine.exists() and other.exists()
    # The last page at the priority the report process started with (this test's), not the partial pages' nice.
    assert os.getpriority(os.PRIO_PROCESS, report.process.pid) == os.getpriority(os.PRIO_PROCESS, 0)
    assert len(report.rewrites()) == 1 and report.rewrites()[0].startswith("report: 4 of 4 cells in ")
    assert "4 of 4 cells: finished" in report.page.read_text()
    assert report.end() == 0
    other.unlink()


def test_a_partial_page_that_completes_is_answered_and_later_lines_get_a_new_one(results, tmp_path):
    report = ReportProcess(results, "qk", tmp_path / "report.log")
    report.send("cell")
    assert report.answer() == "wrote 1 finished"
    report.send("cell")
    report.send("cell")
    answers = [report.answer()]
    while answers[-1] != "wrote 3 finished":  # the two lines may arrive together or apart
        answers.append(report.answer())
    assert report.end() == 0
    assert len(report.rewrites()) == 1 + len(answers)
    assert not list(report.page.parent.glob(".report.html.*.tmp"))


def test_hold_abandons_a_partial_page_in_flight_and_the_store_is_not_read_until_the_next_line(results, tmp_path):
    report = ReportProcess(results, "qk", tmp_path / "report.log")
    report.send("cell")
    child = starve(report.process.pid)
    report.send("hold")
    assert report.answer() == "held 0"
    assert gone(child) and children(report.process.pid) == []
    time.sleep(0.3)
    assert children(report.process.pid) == [] and report.rewrites() == []  # the line waits: no page while held
    report.send("last")
    assert report.answer() == "wrote 2 finished"
    assert report.end() == 0


def test_at_end_of_input_without_last_a_page_with_cells_left_and_none_training_is_drawn_as_interrupted(results,
                                                                                                      tmp_path):
    report = ReportProcess(results, "cut", tmp_path / "report.log")
    report.send("cell")
    assert report.answer() == "wrote 1 partial"  # while the runner was there, the page said the sweep runs
    assert 'data-reload="' in report.page.read_text()
    assert report.end() == 0  # the runner has died, with a cell that never started
    page = report.page.read_text()
    assert 'class="status interrupted"' in page and 'data-reload="' not in page
    assert report.rewrites()[-1].startswith("report: 1 of 2 cells; partial; interrupted, the page no longer reloads")


def test_a_runner_killed_before_reading_its_answers_leaves_no_traceback_in_the_log(results, tmp_path):
    """The runner's end of the answers pipe is gone (it was killed): the page is still drawn, the process ends
    at the end of its input with exit 0, and its log ends in the page's line, not in a BrokenPipeError."""
    report = ReportProcess(results, "qk", tmp_path / "report.log")
    report.process.stdout.close()
    report.send("cell")
    deadline = time.monotonic() + 60
    while not report.rewrites() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert report.end() == 0
    log = report.log.read_text()
    assert "Traceback" not in log and "BrokenPipe" not in log, log
    assert " report: 4 of 4 cells" in log.splitlines()[-1]
