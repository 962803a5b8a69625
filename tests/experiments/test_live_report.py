"""`LiveReport` against the real report process (`python -m analysis.report.live`) on a synthetic store:
every request answered by a rewrite that followed it, failures reported without ending the process,
Ctrl-C ignored, a last page on close (a partial page in flight abandoned for it), `hold` before a compaction;
and a real sweep's page rewritten while it ran."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import db
from experiments import expand
from experiments.declare.load import load_ablation
from experiments.workers.claims import current_claim
from experiments.workers.live_report import LiveReport

from .conftest import wait_for

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402
from report_children import children, gone, starve  # noqa: E402


def command(results: Path, sweep: str) -> list[str]:
    return [sys.executable, "-m", "analysis.report.live", "--results", str(results), "--sweep", sweep]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Sweep 'qk' (4 finished runs) and sweep 'live' (one finished, one still running)."""
    path = tmp_path_factory.mktemp("live") / "results"
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.002, 2), "rmsnorm": (-0.1, 0.002, 2)}, steps=12)
    synthetic.write_run(path, "live-0", sweep="live", arm="base", seed=0, lr=None, final=3.0, steps=12)
    synthetic.write_run(path, "live-1", sweep="live", arm="base", seed=1, lr=None, final=3.0, steps=12, status=None)
    return path


def rewrites(log: Path) -> list[str]:
    """The log's rewrite lines without their time stamps."""
    return [line.split(" ", 1)[1] for line in log.read_text().splitlines() if " report: " in line]


@pytest.mark.slow
def test_every_request_is_answered_and_a_finished_page_is_the_last(results, tmp_path):
    log = tmp_path / "report.log"
    live = LiveReport(command(results, "qk"), log)
    live.start()
    for _ in range(3):
        live.cell_finished()
    live.settle()
    assert (live.sent, live.answered, live.error, live.finished_page) == (3, 3, None, True)
    written = rewrites(log)
    assert 1 <= len(written) <= 3  # lines that arrive during a rewrite are answered by the next one
    assert "4 of 4 cells: finished" in (results / "sweeps" / "qk" / "report.html").read_text()
    live.close()
    assert live.process.returncode == 0 and live.error is None
    assert rewrites(log) == written  # nothing on the page could change: it is not drawn again


@pytest.mark.slow
def test_close_draws_a_last_page_after_a_partial_one(results, tmp_path):
    log = tmp_path / "report.log"
    live = LiveReport(command(results, "live"), log)
    live.cell_finished()
    live.settle()
    assert not live.finished_page and rewrites(log)[-1].startswith("report: 1 of 2 cells; partial in ")
    live.close()
    assert live.process.returncode == 0 and live.sent == live.answered == 2 and len(rewrites(log)) == 2


@pytest.mark.slow
def test_hold_and_close_do_not_wait_for_a_partial_page_in_flight(results, tmp_path):
    log = tmp_path / "report.log"
    live = LiveReport(command(results, "qk"), log)
    live.hold()
    assert live.process is None  # nothing asked, nothing reads the store: no process started for a hold
    live.cell_finished()
    child = starve(live.process.pid)  # the workers leave the partial page no CPU
    live.hold()  # before a compaction
    assert gone(child) and children(live.process.pid) == [] and live.answered == 0
    live.close()
    assert (live.sent, live.answered, live.error, live.process.returncode) == (2, 2, None, 0)
    assert (len(rewrites(log)) == 1
            and "4 of 4 cells: finished" in (results / "sweeps" / "qk" / "report.html").read_text())


@pytest.mark.slow
def test_a_failed_rewrite_is_reported_and_the_process_keeps_answering(results, tmp_path):
    live = LiveReport(command(results, "kq"), tmp_path / "report.log")
    live.cell_finished()
    live.settle()
    assert "no sweep named 'kq'" in live.error and "did you mean 'qk'?" in live.error
    assert live.process.poll() is None
    live.close()
    assert live.answered == 2 and live.process.returncode == 0 and "no sweep named 'kq'" in live.error


def test_a_report_process_that_dies_is_an_error_not_a_crash(tmp_path):
    live = LiveReport([sys.executable, "-c", "import sys; sys.exit(3)"], tmp_path / "report.log")
    live.cell_finished()
    live.close()
    assert live.error == f"the report process exited with code 3; see {tmp_path / 'report.log'}"


@pytest.mark.slow
def test_ctrl_c_to_the_group_does_not_stop_the_report_process(results, tmp_path):
    live = LiveReport(command(results, "qk"), tmp_path / "report.log")
    live.cell_finished()
    live.settle()  # answered once: its signal handlers are in place
    os.kill(live.process.pid, signal.SIGINT)
    live.cell_finished()
    live.settle()
    assert live.answered == 2 and live.process.poll() is None
    live.close()
    assert live.process.returncode == 0


@pytest.mark.slow
def test_a_sweep_rewrites_its_page_while_it_runs_and_ends_with_a_finished_one(tmp_path, ablation_file):
    path = ablation_file(seeds=2, steps=20)
    results, log = tmp_path / "results", tmp_path / "results" / "sweeps" / "t" / "logs" / "report.log"
    ids = [c.run_id for c in expand(load_ablation(str(path))[0], overrides={"vocab_size": 512}).cells]
    sweep = subprocess.Popen([sys.executable, "-m", "cli.main", "sweep", str(path), "--results", str(results),
                              "--set", "vocab_size=512", "--workers", "1", "--no-progress"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Once a cell has finished, its worker is stopped until a partial page is written: the page is rewritten while
    # the sweep runs however busy the machine (the report process needs seconds of imports, at nice 10 for pages;
    # a worker it could not keep up with would otherwise finish the sweep first).
    wait_for(lambda: any(current_claim(results, r) for r in ids), every=0.01)
    worker = next(claim.pid for r in ids if (claim := current_claim(results, r)))
    wait_for(lambda: any(db.run_state(results, r).result for r in ids), every=0.01)
    os.kill(worker, signal.SIGSTOP)
    try:
        wait_for(lambda: log.exists() and any("of 4 cells; partial" in line for line in rewrites(log)))
    finally:
        os.kill(worker, signal.SIGCONT)
    _, err = sweep.communicate()
    assert sweep.returncode == 0, err
    written = rewrites(log)
    assert any("of 4 cells; partial" in line for line in written), written
    assert written[-1].startswith("report: 4 of 4 cells in ")
    page = (results / "sweeps" / "t" / "report.html").read_text()
    assert "4 of 4 cells: finished" in page and 'http-equiv="refresh"' not in page
