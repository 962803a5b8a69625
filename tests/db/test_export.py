import pyarrow.parquet as pq

import db
from db.export import export


def test_export_writes_one_parquet_file_per_view_with_every_row(results, write_run, tmp_path):
    write_run(results, "r1")
    write_run(results, "r2")
    paths = export(results, tmp_path / "out")
    assert sorted(p.name for p in paths) == ["events.parquet", "layer_metrics.parquet", "metrics.parquet",
                                             "runs.parquet"]
    con = db.connect(results)
    for path in paths:
        view = path.stem
        assert pq.read_metadata(path).num_rows == con.execute(f"SELECT count(*) FROM {view}").fetchone()[0]
    assert pq.read_table(tmp_path / "out" / "runs.parquet").column("run_id").to_pylist() != []
