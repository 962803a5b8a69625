"""Many real writer processes at once, with a reader querying throughout: every row arrives, nothing fails."""

import subprocess
import sys
from pathlib import Path

import pytest

import db

HERE = Path(__file__).parent
WRITERS = 16
ROWS = 10_000


@pytest.mark.slow
def test_sixteen_writers_and_a_querying_reader(results, tmp_path):
    stop = tmp_path / "stop"
    reader = subprocess.Popen(
        [sys.executable, str(HERE / "query_process.py"), str(results), str(stop)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    writers = [
        subprocess.Popen(
            [sys.executable, str(HERE / "writer_process.py"), str(results), f"w{i:02d}", str(ROWS), "1000"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        for i in range(WRITERS)
    ]
    writer_errors = [w.communicate()[1] for w in writers]
    stop.touch()
    out, err = reader.communicate()
    assert [w.returncode for w in writers] == [0] * WRITERS, writer_errors
    assert reader.returncode == 0, err
    assert int(out.split()[-1]) > 0  # the reader really queried while writers ran
    con = db.connect(results)
    assert con.execute("SELECT count(*) FROM metrics").fetchone() == (WRITERS * ROWS,)
    assert (con.execute("SELECT count(*), count(DISTINCT run_id) FROM runs WHERE status = 'completed'").fetchone()
            == (WRITERS, WRITERS))
    per_run = con.execute("SELECT min(n), max(n) FROM "
                          "(SELECT count(DISTINCT step) AS n FROM metrics GROUP BY run_id)").fetchone()
    assert per_run == (ROWS, ROWS)
