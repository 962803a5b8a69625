import subprocess
import sys
from pathlib import Path

import pandas
import pytest

import db


def test_resolve_results_dir_prefers_argument_then_env_then_default(monkeypatch):
    monkeypatch.setenv("HARNESS_RESULTS", "/from/env")
    assert db.resolve_results_dir("/from/arg") == Path("/from/arg")
    assert db.resolve_results_dir(None) == Path("/from/env")
    monkeypatch.delenv("HARNESS_RESULTS")
    assert db.resolve_results_dir(None) == Path("results")


def test_connect_uses_the_environment_default(results, write_run, monkeypatch):
    write_run(results, "r1")
    monkeypatch.setenv("HARNESS_RESULTS", str(results))
    assert db.connect().execute("SELECT run_id FROM runs").fetchone() == ("r1",)


@pytest.mark.parametrize("make", [lambda p: None, lambda p: p.mkdir(), lambda p: (p / "runs").mkdir(parents=True)])
def test_missing_or_empty_results_dir_says_how_to_create_results(results, make):
    make(results)
    with pytest.raises(db.NoResultsError, match=r"harness run --preset tiny --steps 200"):
        db.connect(results)


def test_engine_serves_the_views_to_pandas_read_sql(results, write_run):
    write_run(results, "r1", val_losses=(3.0, 2.0, 2.2))
    engine = db.engine(results)
    frame = pandas.read_sql("SELECT run_id, final_val_loss, best_val_loss FROM runs", engine)
    assert frame.to_dict("records") == [{"run_id": "r1", "final_val_loss": 2.2, "best_val_loss": 2.0}]
    write_run(results, "r2")  # a new checkout sees runs written after the engine was made
    assert len(pandas.read_sql("SELECT * FROM metrics", engine)) == 2 * 33


def test_importing_db_never_imports_torch():
    modules = "db, db.connect, db.writer, db.views, db.catalog, db.compact, db.export, db.readonly, db.render"
    code = f"import sys, {modules}; assert 'torch' not in sys.modules, 'db imported torch'"
    subprocess.run([sys.executable, "-c", code], check=True)
