import pytest
import torch

from harness.config.model import ModelConfig
from harness.model import registry
from harness.model.positions import apply_rope


def _positions(kind, **overrides):
    cfg = ModelConfig(n_heads=1, positions=kind, **overrides)
    return registry.POSITIONS[kind].build(cfg, None)


def RotaryPositions(head_dim, theta):  # noqa: N802 - stands in for the class
    return _positions("rope", head_dim=head_dim, rope_theta=theta)


def _rotated(x, positions, head_dim=8, theta=10000.0):
    return apply_rope(x, RotaryPositions(head_dim, theta).rotation(positions))


def test_rope_equals_complex_multiplication_with_half_split_pairs():
    head_dim, theta = 8, 500.0
    x = torch.randn(2, 3, 6, head_dim, dtype=torch.float64)
    positions = torch.arange(6)
    half = head_dim // 2
    # Hugging Face Llama pairs channel i with i + D/2: that pair is the complex number x_i + i·x_{i+D/2}.
    as_complex = torch.complex(x[..., :half], x[..., half:])
    freqs = theta ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    rotated = as_complex * torch.polar(torch.ones(6, half, dtype=torch.float64), positions[:, None] * freqs)
    expected = torch.cat((rotated.real, rotated.imag), dim=-1)
    got = apply_rope(x, RotaryPositions(head_dim, theta).rotation(positions))
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)  # the tables are float32, as in HF


def test_rope_scores_depend_only_on_relative_position():
    q, k = torch.randn(1, 1, 1, 8), torch.randn(1, 1, 1, 8)

    def score(m, n):
        return (_rotated(q, torch.tensor([m])) * _rotated(k, torch.tensor([n]))).sum()

    torch.testing.assert_close(score(5, 2), score(13, 10))
    torch.testing.assert_close(score(0, 0), score(7, 7))
    torch.testing.assert_close(score(0, 0), (q * k).sum())
    assert not torch.allclose(score(5, 2), score(5, 4))


def test_rope_preserves_norm():
    x = torch.randn(2, 2, 5, 8)
    torch.testing.assert_close(_rotated(x, torch.arange(5)).norm(dim=-1), x.norm(dim=-1))


def test_rope_offset_continues_positions():
    rope, x = RotaryPositions(8, 10000.0), torch.zeros(1, 3, 4)
    _, (cos, sin) = rope(x, offset=4)
    full_cos, full_sin = rope.rotation(torch.arange(7))
    torch.testing.assert_close(cos, full_cos[4:])
    torch.testing.assert_close(sin, full_sin[4:])


def test_learned_positions_add_per_position_vectors_and_refuse_beyond_max():
    learned = _positions("learned", max_seq_len=6, d_model=4)
    learned.reset_parameters()
    x = torch.zeros(2, 3, 4)
    out, rotation = learned(x, offset=2)
    assert rotation is None
    torch.testing.assert_close(out, learned.weight[2:5].expand(2, -1, -1))
    with pytest.raises(ValueError, match="max_seq_len=6"):
        learned(x, offset=4)


def test_nope_changes_nothing():
    x = torch.randn(1, 3, 4)
    out, rotation = _positions("nope")(x, offset=3)
    assert out is x and rotation is None


def test_local_rotation_uses_rope_local_theta_unscaled():
    """Sliding-window layers' tables (Gemma 3) are plain RoPE at rope_local_theta, even when rope_type rescales
    the other layers: the closed form cos/sin(p · θ_local^(-2i/D))."""
    rope = _positions("rope", head_dim=8, rope_theta=1e6, rope_local_theta=100.0, sliding_window=4,
                      rope_type="llama3", rope_original_max_seq_len=8)
    positions = torch.arange(9)
    freqs = 100.0 ** (-torch.arange(0, 8, 2, dtype=torch.float64) / 8)
    angles = (positions[:, None] * freqs).repeat(1, 2)  # (T, D): the two halves share a frequency
    cos, sin = rope.rotation(positions, local=True)
    torch.testing.assert_close(cos, angles.cos().float())
    torch.testing.assert_close(sin, angles.sin().float())
    _, (global_cos, _) = rope(torch.zeros(1, 9, 4), offset=0)
    assert not torch.allclose(global_cos, cos)
    local_cos, _ = rope.local_rotation(torch.zeros(1, 3, 4), offset=6)
    torch.testing.assert_close(local_cos, cos[6:])
