"""The results store: many writers append Parquet shards, readers query DuckDB views. Never imports torch.

    import db
    with db.RunWriter.open("results", "run-1", sweep="qk", arm="rmsnorm", seed=0, config={"d_model": 128}) as w:
        w.log_metrics(10, {"train_loss": 3.2})
    db.connect("results").sql("select run_id, status, final_val_loss from runs").show()

See docs/db.md for the views, the on-disk layout and the guarantees.
"""

from db.connect import connect, engine
from db.errors import CorruptShardWarning, DbError, NoResultsError, ReadOnlyQueryError, SchemaVersionError, StoreDamage
from db.paths import resolve_results_dir
from db.plans import plan_history, read_plan, read_plan_at, read_sweep, read_sweep_meta
from db.run_state import RunState, result_summary, run_state
from db.schema import SCHEMA_VERSION
from db.sweeps import archive_plan, sweep_dir, write_confirmation, write_sweep, write_trial
from db.writer import STATUSES, RunWriter

__all__ = [
    "SCHEMA_VERSION",
    "STATUSES",
    "CorruptShardWarning",
    "DbError",
    "NoResultsError",
    "ReadOnlyQueryError",
    "RunState",
    "RunWriter",
    "SchemaVersionError",
    "StoreDamage",
    "archive_plan",
    "connect",
    "engine",
    "plan_history",
    "read_plan",
    "read_plan_at",
    "read_sweep",
    "read_sweep_meta",
    "resolve_results_dir",
    "result_summary",
    "run_state",
    "sweep_dir",
    "write_confirmation",
    "write_sweep",
    "write_trial",
]
