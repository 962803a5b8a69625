"""A shared synthetic store with planted effects (written once per session through `db.RunWriter`)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # `synthetic` is shared with benchmarks/bench_analysis.py

import synthetic  # noqa: E402


@pytest.fixture(scope="session")
def planted_store(tmp_path_factory):
    """(results dir, planted finals) of sweep 'planted': one LR (1e-3), the arms of synthetic.PLANTED."""
    results = tmp_path_factory.mktemp("planted") / "results"
    finals = synthetic.write_planted(results, "planted", synthetic.PLANTED, lrs=(1e-3,), diverged=synthetic.DIVERGED,
                                     spikes=(20,), logit_growth=4.0)
    return results, finals
