import pyarrow.parquet as pq
import pytest

import db
from db.schema import SCHEMA_VERSION, VERSION_KEY


def test_results_dir_is_stamped_with_the_schema_version(results, write_run):
    write_run(results, "r1")
    assert (results / "SCHEMA_VERSION").read_text().strip() == str(SCHEMA_VERSION)
    meta = pq.read_metadata(next((results / "runs" / "r1" / "metrics").glob("*.parquet"))).metadata
    assert meta[VERSION_KEY] == str(SCHEMA_VERSION).encode()


@pytest.mark.parametrize("version, message",
                         [(SCHEMA_VERSION + 1, "newer than this harness reads"), ("banana", "unknown schema version")])
def test_newer_or_unknown_version_file_fails_clearly_for_readers_and_writers(results, write_run, version, message):
    write_run(results, "r1")
    (results / "SCHEMA_VERSION").write_text(f"{version}\n")
    with pytest.raises(db.SchemaVersionError, match=message):
        db.connect(results)
    with pytest.raises(db.SchemaVersionError, match=message):
        db.RunWriter.open(results, "r2")


def test_shard_from_a_newer_schema_fails_naming_the_file(results, write_run):
    write_run(results, "r1")
    shard = next((results / "runs" / "r1" / "metrics").glob("*.parquet"))
    table = pq.read_table(shard)
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, VERSION_KEY: b"99"}), shard)
    with pytest.raises(db.SchemaVersionError, match=f"{shard}.*schema version 99"):
        db.connect(results)
