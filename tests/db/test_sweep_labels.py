"""An arm's display label in the plan and the `sweep_cells` view: NULL where none was given, where the plan
predates labels, and in an implicit sweep."""

import pyarrow.parquet as pq

import db


def test_labels_show_in_sweep_cells_and_are_null_where_none_was_given(results, write_run):
    write_run(results, "k1", sweep="mlp", arm="base")
    write_run(results, "k2", sweep="mlp", arm="mlp=gelu")
    write_run(results, "h1", sweep="hand", arm="x")  # an implicit sweep: no plan
    db.write_sweep(results, "mlp", {}, [{"arm": "base", "arm_label": "SwiGLU", "lr": 1e-3, "seed": 0, "run_id": "k1"},
                                        {"arm": "mlp=gelu", "lr": 1e-3, "seed": 0, "run_id": "k2"}])
    rows = db.connect(results).execute("SELECT sweep, arm, arm_label FROM sweep_cells ORDER BY sweep, arm").fetchall()
    assert rows == [("hand", "x", None), ("mlp", "base", "SwiGLU"), ("mlp", "mlp=gelu", None)]


def test_a_plan_written_before_labels_reads_as_null(results, write_run):
    write_run(results, "k1", sweep="old", arm="base")
    folder = db.write_sweep(results, "old", {}, [{"arm": "base", "lr": 1e-3, "seed": 0, "run_id": "k1"}])
    old = pq.read_table(folder / "cells.parquet").drop_columns(["arm_label"])
    assert "arm_label" not in old.schema.names
    pq.write_table(old, folder / "cells.parquet")
    rows = db.connect(results).execute("SELECT arm, arm_label, status FROM sweep_cells").fetchall()
    assert rows == [("base", None, "completed")]
