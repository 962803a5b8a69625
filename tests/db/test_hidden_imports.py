"""`arrow_without_pandas`: a process that writes the store builds its arrays without importing pandas (0.6 s
of CPU on a worker's first write), writes every row and timestamp as before, and can still use pandas when
it asks for it. Each check runs in a fresh interpreter: what a process imported first is the point."""

import json
import subprocess
import sys
from datetime import datetime, timezone

import pytest

import db


@pytest.mark.slow
def test_a_store_written_after_arrow_without_pandas_is_complete_and_pandas_still_imports_on_request(tmp_path):
    results = tmp_path / "results"
    code = (
        "import json, sys\n"
        "from db.hidden_imports import arrow_without_pandas\n"
        "arrow_without_pandas()\n"
        "import db\n"
        f"with db.RunWriter.open({str(results)!r}, 'r', flush_rows=3) as writer:\n"
        "    for step in range(1, 10):\n"
        "        writer.log_metrics(step, {'loss': 1.0 / step})\n"
        "        writer.log_event(step, 'spike', value=float(step), detail='x')\n"
        "written = 'pandas' in sys.modules\n"
        "import pyarrow as pa\n"
        "frame = pa.table({'a': [1, 2]}).to_pandas()\n"
        "print(json.dumps({'pandas_while_writing': written, 'to_pandas': type(frame).__name__}))\n"
    )
    before = datetime.now(timezone.utc)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.splitlines()[-1]) == {"pandas_while_writing": False, "to_pandas": "DataFrame"}
    con = db.connect(results)
    assert con.sql("SELECT step, value FROM metrics ORDER BY step").fetchall() == [(s, 1.0 / s) for s in range(1, 10)]
    assert con.execute("SELECT count(*) FROM events WHERE kind = 'spike'").fetchone() == (9,)
    started, finished, status = con.execute("SELECT started_at, finished_at, status FROM runs").fetchone()
    assert status == "completed" and before <= started <= finished <= datetime.now(timezone.utc)
