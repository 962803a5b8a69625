"""The workers' shared options (experiments/workers/options.py)."""

import pytest

from errors import ConfigError
from experiments.workers.options import check_stale_after


def test_stale_after_must_span_five_heartbeats():
    check_stale_after(10.0, 2.0)
    message = r"--stale-after 9.9 is invalid: must be ≥ 10 seconds \(5 heartbeats of 2 s\)"
    with pytest.raises(ConfigError, match=message):
        check_stale_after(9.9, 2.0)
    with pytest.raises(ConfigError, match="--heartbeat-every 0 is invalid"):
        check_stale_after(10.0, 0.0)
