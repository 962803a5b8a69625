"""A writer killed with SIGKILL mid-write loses at most its unflushed tail, and breaks nothing else."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import db

HERE = Path(__file__).parent
FLUSH_ROWS = 500


def _start_victim(results) -> subprocess.Popen:
    """A writer logging without end (and printing `flushed N` after each flush), to be SIGKILLed."""
    return subprocess.Popen(
        [sys.executable, str(HERE / "writer_process.py"), str(results), "victim", "0", str(FLUSH_ROWS), "--forever"],
        stdout=subprocess.PIPE, text=True,
    )


def test_sigkilled_writer_loses_only_its_unflushed_tail(results, write_run):
    write_run(results, "before")
    victim = _start_victim(results)
    flushed = 0
    while flushed < 20 * FLUSH_ROWS:  # let it publish a number of shards, then kill it while it writes
        flushed = int(victim.stdout.readline().split()[1])
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    write_run(results, "after")

    con = db.connect(results)
    statuses = dict(con.execute("SELECT run_id, status FROM runs").fetchall())
    assert statuses == {"before": "completed", "after": "completed", "victim": "crashed"}
    count, distinct, last = con.execute(
        "SELECT count(*), count(DISTINCT step), max(step) FROM metrics WHERE run_id = 'victim'"
    ).fetchone()
    assert count == distinct == last + 1  # a gap-free prefix of what it logged
    assert count >= flushed and count % FLUSH_ROWS == 0  # everything reported flushed; whole shards only
    assert con.execute("SELECT count(*) FROM metrics WHERE run_id <> 'victim'").fetchone() == (66,)
    for view in ("layer_metrics", "events"):
        con.execute(f"SELECT * FROM {view}").fetchall()


def test_sigkilled_writer_not_yet_reaped_shows_crashed(results):
    victim = _start_victim(results)
    victim.stdout.readline()
    victim.send_signal(signal.SIGKILL)
    try:
        while _state(victim.pid) != "Z":  # dead but unreaped: os.kill(pid, 0) still succeeds on it
            time.sleep(0.01)
        assert db.connect(results).execute("SELECT status FROM runs").fetchall() == [("crashed",)]
    finally:
        victim.wait()


def _state(pid: int) -> str:
    """The process state letter from /proc/<pid>/stat (R, S, Z, ...)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
