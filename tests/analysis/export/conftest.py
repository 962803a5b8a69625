"""The planted store of the export tests (planted_store.py), written once per session."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # `planted_store` is shared with tests/cli/test_export_cli.py

import planted_store  # noqa: E402


@pytest.fixture(scope="session")
def planted(tmp_path_factory):
    """(results dir, {run id: PlantedRun}) of sweep `exp`."""
    results = tmp_path_factory.mktemp("export") / "results"
    return results, planted_store.write_store(results)
