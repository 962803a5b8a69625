"""What `harness sweep` asks of db on its way to the first step and at its close imports no pandas (0.5 s of
CPU or more on the 2-core VM, competing with the workers' start): writing and reading a plan, compacting the
store and writing its index. Checked in a fresh interpreter, on a store written here."""

import subprocess
import sys

import pytest

import db


@pytest.mark.slow
def test_the_plan_and_the_closing_compaction_import_no_pandas(tmp_path):
    results = tmp_path / "results"
    with db.RunWriter.open(results, "r", flush_rows=3) as writer:  # several shards: compaction has work
        for step in range(1, 10):
            writer.log_metrics(step, {"loss": 1.0 / step})
    code = (
        "import sys, db\n"
        "from db.compact import compact\n"
        f"db.write_sweep({str(results)!r}, 's', {{}}, "
        "[{'arm': 'a', 'lr': 0.001, 'seed': 0, 'run_id': 'r', 'steps': 9}])\n"
        f"plan = db.read_plan({str(results)!r}, 's').to_pylist()\n"
        f"print(compact({str(results)!r}), plan[0]['lr'], plan[0]['steps'], 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1", "0.001", "9", "False"]
    rows = db.connect(results).sql("SELECT step, value FROM metrics ORDER BY step").fetchall()
    assert rows == [(step, 1.0 / step) for step in range(1, 10)]  # every logged row, read through the new index
