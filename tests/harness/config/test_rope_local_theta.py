"""`rope_local_theta` (the RoPE base of sliding-window layers): its validation, its default and its run key."""

import pytest

from errors import ConfigError
from harness.config import ModelConfig

WINDOWED = dict(sliding_window=4, global_every=6)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"rope_local_theta": 1e4}, "needs positions='rope' and sliding_window set"),  # no window: never used
        ({**WINDOWED, "rope_local_theta": 0.0}, "must be a positive number or None"),
        ({**WINDOWED, "rope_local_theta": float("inf")}, "must be finite"),
        ({**WINDOWED, "rope_local_theta": float("nan")}, "must be a positive number or None"),
        ({**WINDOWED, "rope_local_theta": "10000"}, "must be a positive number or None"),
        ({**WINDOWED, "rope_local_theta": 1e4, "positions": "learned"}, "positions='rope'"),
    ],
)
def test_invalid_values_name_the_field(changes, expected):
    with pytest.raises(ConfigError, match=f"rope_local_theta=.*{expected}"):
        ModelConfig(**changes)


def test_default_leaves_run_keys_alone_and_ints_hash_like_floats():
    assert ModelConfig().rope_local_theta is None and "rope_local_theta" not in ModelConfig().changed_fields()
    assert ModelConfig(**WINDOWED).content_hash() == ModelConfig(**WINDOWED, rope_local_theta=None).content_hash()
    as_int = ModelConfig(**WINDOWED, rope_local_theta=10000)
    assert as_int.rope_local_theta == 10000.0 and isinstance(as_int.rope_local_theta, float)
    assert as_int.content_hash() == ModelConfig(**WINDOWED, rope_local_theta=1e4).content_hash()


def test_only_sliding_window_layers_use_it():
    cfg = ModelConfig(n_layers=6, **WINDOWED, rope_local_theta=1e4)
    assert [cfg.layer_uses_local_rope(i) for i in range(6)] == [True] * 5 + [False]
    assert not ModelConfig(n_layers=6, **WINDOWED).layer_uses_local_rope(0)
