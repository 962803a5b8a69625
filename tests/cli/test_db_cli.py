import hashlib
import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

import db
from cli.main import main


@pytest.fixture
def results(tmp_path):
    """Two finished runs of one sweep."""
    path = tmp_path / "results"
    for seed, final in ((0, 2.5), (1, 2.25)):
        with db.RunWriter.open(path, f"run-{seed}", sweep="qk", arm="rmsnorm", seed=seed,
                               config={"qk_norm": "rmsnorm"}) as writer:
            for step in range(20):
                writer.log_metrics(step, {"train_loss": 3.0})
            writer.log_metrics(19, {"val_loss": final})
    return path


def _checksums(path):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.rglob("*")) if p.is_file()}


def _harness(*args, env=None):
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True, text=True, env=env)


def test_query_prints_a_table(results, capsys):
    assert main(["db", "query", "select run_id, final_val_loss from runs order by run_id", "--results",
                 str(results)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "run_id  final_val_loss", "------  --------------", "run-0              2.5", "run-1             2.25",
        "(2 rows)"
    ]


def test_query_formats_csv_json_and_parquet(results, tmp_path, capsys):
    sql = "select run_id, seed from runs order by run_id"
    main(["db", "query", sql, "--results", str(results), "--format", "csv"])
    assert capsys.readouterr().out.splitlines() == ['"run_id","seed"', '"run-0",0', '"run-1",1']
    main(["db", "query", sql, "--results", str(results), "--format", "json"])
    assert json.loads(capsys.readouterr().out) == [{"run_id": "run-0", "seed": 0}, {"run_id": "run-1", "seed": 1}]
    out = tmp_path / "q.parquet"
    assert main(["db", "query", sql, "--results", str(results), "--format", "parquet", "--output", str(out)]) == 0
    assert pq.read_table(out).column("seed").to_pylist() == [0, 1]
    assert main(["db", "query", sql, "--results", str(results), "--format", "parquet"]) == 2
    assert "needs --output" in capsys.readouterr().err


def test_unwritable_output_is_one_error_line(results, tmp_path, capsys):
    assert main(["db", "query", "select 1", "--results", str(results), "--output",
                 str(tmp_path / "no" / "such" / "dir.csv")]) == 2
    assert capsys.readouterr().err.startswith("harness db query: error: [Errno 2] No such file or directory")


def test_results_default_comes_from_the_environment(results, monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_RESULTS", str(results))
    assert main(["db", "query", "select count(*) as n from runs", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ['"n"', "2"]


def test_runs_prints_one_readable_line_per_run(results, capsys):
    assert main(["db", "runs", "--results", str(results)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["run_id", "sweep", "arm", "seed", "status", "last_step", "final_val_loss",
                                "best_val_loss", "diverged_at_step", "harness_version", "git_commit", "git_dirty",
                                "code_versions", "device_name"]
    # written by db.RunWriter without provenance: the code columns are NULL
    assert lines[2].split() == ["run-0", "qk", "rmsnorm", "0", "completed", "19", "2.5", "2.5", *["NULL"] * 6]


def test_runs_as_json_uses_the_views_column_names(results, capsys):
    import db

    assert main(["db", "runs", "--results", str(results), "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert set(records[0]) <= set(db.connect(results).sql("select * from runs").columns)
    assert [record["run_id"] for record in records] == ["run-0", "run-1"]


@pytest.mark.parametrize(
    "sql",
    ["DROP VIEW runs", "DELETE FROM metrics", "INSERT INTO _status VALUES (1)", "COPY runs TO 'x.csv'",
     "UPDATE _manifests SET seed = 9"]
)
def test_writes_are_refused_and_data_untouched(results, sql, capsys):
    before = _checksums(results)
    assert main(["db", "query", sql, "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert "not allowed: queries are read-only" in err and len(err.strip().splitlines()) == 1
    assert _checksums(results) == before


def test_bad_sql_gets_duckdbs_message_on_one_line_and_exit_2(results):
    done = _harness("db", "query", "selec * from runs", "--results", str(results))
    assert done.returncode == 2
    assert (done.stderr.strip().splitlines()
            == ['harness db query: error: Parser Error: syntax error at or near "selec"'])
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("command", [["runs"], ["query", "select 1"], ["export", "out"]])
def test_missing_results_dir_explains_how_to_make_results(tmp_path, command):
    done = _harness("db", *command, "--results", str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert "harness run --preset tiny --steps 200" in done.stderr and "Traceback" not in done.stderr


def test_corrupt_shard_is_reported_as_a_warning_line(results, capsys):
    shard = next((results / "runs" / "run-0" / "metrics").glob("*.parquet"))
    shard.write_bytes(b"broken")
    assert main(["db", "query", "select count(*) as n from metrics", "--results", str(results), "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ['"n"', "21"]
    assert f"harness db: warning: skipping shard {shard}" in captured.err


def _damage_pages(shard):
    """Make the header of the `value` column's first data page unreadable, leaving the footer intact."""
    offset = pq.read_metadata(shard).row_group(0).column(4).data_page_offset
    data = bytearray(shard.read_bytes())
    data[offset : offset + 8] = b"\xff" * 8
    shard.write_bytes(bytes(data))


def test_shard_damaged_inside_its_pages_costs_a_warning_not_the_answer(results, capsys):
    shard = next((results / "runs" / "run-0" / "metrics").glob("*.parquet"))
    _damage_pages(shard)
    assert main(["db", "query", "select run_id, count(value) as n from metrics group by 1", "--results", str(results),
                 "--format", "csv"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ['"run_id","n"', '"run-1",21']
    assert f"harness db: warning: skipping shard {shard}: damaged data pages" in captured.err


def test_each_warning_is_printed_once_though_a_recovering_query_rescans(results, capsys):
    damaged = next((results / "runs" / "run-0" / "metrics").glob("*.parquet"))
    truncated = next((results / "runs" / "run-1" / "metrics").glob("*.parquet"))
    _damage_pages(damaged)
    truncated.write_bytes(truncated.read_bytes()[:100])
    assert main(["db", "query", "select sum(value) as s from metrics", "--results", str(results), "--format",
                 "csv"]) == 0
    warnings = sorted(capsys.readouterr().err.splitlines(), key=lambda line: str(damaged) not in line)
    assert len(warnings) == 2
    assert warnings[0].startswith(f"harness db: warning: skipping shard {damaged}: damaged data pages (")
    assert warnings[1] == (f"harness db: warning: skipping shard {truncated}: no Parquet magic bytes at start or end "
                           "(truncated or overwritten)")


def test_export_and_compact(results, tmp_path, capsys):
    assert main(["db", "export", str(tmp_path / "out"), "--results", str(results)]) == 0
    assert pq.read_metadata(tmp_path / "out" / "metrics.parquet").num_rows == 42
    assert main(["db", "compact", "--results", str(results)]) == 0
    assert "compacted 0 run segments" in capsys.readouterr().out  # each run flushed once: nothing to merge


def test_cli_help_imports_neither_duckdb_nor_pyarrow():
    code = ("import sys; from cli.main import build_parser; build_parser(); assert not {'duckdb', 'pyarrow', 'torch'} "
            "& set(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_query_writes_lists_and_intervals_as_csv(results, capsys):
    assert main(["db", "query", "select [1, 2] as l, interval 2 day as iv", "--results", str(results), "--format",
                 "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ['"l","iv"', '"[1, 2]","2 days"']


def test_cli_formats_are_the_renderers():
    from cli.db import FORMATS as CLI_FORMATS
    from db.render import FORMATS

    assert CLI_FORMATS == FORMATS  # kept apart so `harness --help` need not import pyarrow


def test_output_cut_short_by_a_closed_pipe_is_not_an_error(results):
    done = subprocess.run(
        f"{sys.executable} -m cli.main db query 'select * from range(300000)' --format csv --results {results} | head "
        "-1",
        shell=True, capture_output=True, text=True,
    )
    assert done.stdout == '"range"\n' and done.stderr == ""


@pytest.mark.slow
def test_concurrent_compactions_all_finish_with_exit_0_and_lose_no_row(tmp_path):
    """Four `harness db compact` of one store at once (a sweep closing and a user, say): one compacts, the others
    wait for it and find nothing left; no traceback, exit 0 each, every row once."""
    results = tmp_path / "results"
    for run in range(12):
        writer = db.RunWriter.open(results, f"r{run}", flush_rows=5)
        for step in range(200):
            writer.log_metrics(step, {"train_loss": float(step)})
        writer.close()
    rows = "SELECT run_id, count(*), count(DISTINCT step) FROM metrics GROUP BY run_id ORDER BY run_id"
    before = db.connect(results).sql(rows).fetchall()
    runs = [subprocess.Popen([sys.executable, "-m", "cli.main", "db", "compact", "--results", str(results)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [run.communicate() for run in runs]
    assert [run.returncode for run in runs] == [0, 0, 0, 0], outputs
    assert sorted(out.strip() for out, _ in outputs) == ["compacted 0 run segments"] * 3 + ["compacted 12 run segments"]
    for _, err in outputs:
        assert err == "" or (err.count("\n") == 1 and "another compaction of" in err and "waiting for it" in err), err
    assert (db.connect(results).sql(rows).fetchall() == before
            == [(f"r{run}", 200, 200) for run in sorted(range(12), key=str)])
