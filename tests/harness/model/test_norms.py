import pytest
import torch
import torch.nn.functional as F

from harness.config.model import ModelConfig
from harness.model import registry


def RMSNorm(width, eps, unit_offset=False, bias=False):  # noqa: N802 - stands in for the class
    return _norm("rmsnorm", width, eps, unit_offset, bias)


def LayerNorm(width, eps, unit_offset=False, bias=False):  # noqa: N802
    return _norm("layernorm", width, eps, unit_offset, bias)


def _norm(kind, width, eps, unit_offset, bias):
    """The registry's norm as the model builds it, from a config carrying eps, offset and bias."""
    cfg = ModelConfig(norm_eps=eps, norm_unit_offset=unit_offset, bias="all" if bias else "none")
    return registry.NORMS[kind].build(cfg, None, width)


def _randomize(norm):
    with torch.no_grad():
        for param in norm.parameters():
            param.normal_()
    return norm


def test_rmsnorm_matches_torch_reference():
    norm = _randomize(RMSNorm(16, eps=1e-6))
    x = torch.randn(3, 5, 16)
    expected = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * norm.weight
    torch.testing.assert_close(norm(x), expected)
    torch.testing.assert_close(norm(x), F.rms_norm(x, (16,), norm.weight, 1e-6))


@pytest.mark.parametrize("bias", [False, True])
def test_layernorm_matches_torch_reference(bias):
    norm = _randomize(LayerNorm(16, eps=1e-5, bias=bias))
    x = torch.randn(3, 5, 16)
    centered = x - x.mean(-1, keepdim=True)
    expected = centered * torch.rsqrt(centered.pow(2).mean(-1, keepdim=True) + 1e-5) * norm.weight
    if bias:
        expected = expected + norm.bias
    torch.testing.assert_close(norm(x), expected)
    reference = torch.nn.LayerNorm(16, eps=1e-5, bias=bias)
    reference.load_state_dict(norm.state_dict())
    torch.testing.assert_close(norm(x), reference(x))
    assert (norm.bias is not None) == bias


@pytest.mark.parametrize("cls", [RMSNorm, LayerNorm])
def test_unit_offset_applies_one_plus_weight_and_starts_as_identity_scale(cls):
    plain, offset = cls(8, eps=1e-5), cls(8, eps=1e-5, unit_offset=True)
    assert torch.equal(offset.weight, torch.zeros(8)) and torch.equal(plain.weight, torch.ones(8))
    x = torch.randn(4, 8)
    torch.testing.assert_close(offset(x), plain(x))
    with torch.no_grad():
        offset.weight.fill_(0.5)
        plain.weight.fill_(1.5)
    torch.testing.assert_close(offset(x), plain(x))


def test_rmsnorm_never_has_bias():
    assert [name for name, _ in RMSNorm(8, eps=1e-5, bias=True).named_parameters()] == ["weight"]


def test_weightless_rmsnorm_is_x_over_rms_and_has_no_tensor():
    norm = _norm("rmsnorm_noweight", 16, 1e-6, unit_offset=False, bias=True)
    assert list(norm.parameters()) == []
    x = torch.randn(3, 5, 16)
    torch.testing.assert_close(norm(x), x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))
