import pytest
import torch

from harness.config.model import ModelConfig
from harness.model import build_model, probe
from harness.model.softcap import soft_cap


def _brute_force(model, tokens):
    """Full (T, T) scores per layer with explicit K repeats and a dense mask."""
    model.capture_qk(True)
    model(tokens)
    rows = []
    seq = tokens.shape[1]
    for layer in model.layers:
        attn = layer.attn
        k = attn.captured_k.repeat_interleave(attn.n_heads // attn.n_kv_heads, dim=1)
        scores = attn.captured_q @ k.transpose(-1, -2) * attn.scale  # (B, H, T, T)
        i, j = torch.arange(seq)[:, None], torch.arange(seq)[None, :]
        allowed = (j <= i) & ((i - j < attn.window) if attn.window is not None else True)
        rows.append(scores.masked_fill(~allowed, float("-inf")).amax(dim=(0, 2, 3)))
    model.capture_qk(False)
    return torch.stack(rows)


@pytest.mark.parametrize("overrides", [
    {"n_kv_heads": 2},
    {"n_kv_heads": 1, "sliding_window": 3, "global_every": 2, "attn_softcap": 0.5},
    {"qk_norm": "rmsnorm", "attn_sinks": True, "nope_every": 2},
])
def test_max_attention_logits_matches_brute_force(overrides, monkeypatch):
    torch.manual_seed(0)
    model = build_model(ModelConfig(vocab_size=40, d_model=32, n_layers=2, n_heads=4, **overrides))
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param))
    tokens = torch.randint(0, 40, (3, 11))
    monkeypatch.setattr(probe, "CHUNK_ELEMENTS", 3 * 4 * 11 * 4)  # several query chunks of 4
    result = probe.max_attention_logits(model, tokens)
    expected = _brute_force(model, tokens)
    assert result.raw.shape == (2, 4)
    torch.testing.assert_close(result.raw, expected)
    if model.cfg.attn_softcap is None:
        assert result.capped is None
    else:
        torch.testing.assert_close(result.capped, soft_cap(expected, model.cfg.attn_softcap))
        assert (result.capped.abs() <= model.cfg.attn_softcap).all()  # tanh saturates in float32


def test_probe_leaves_capture_off_and_frees_tensors():
    model = build_model(ModelConfig(vocab_size=40, d_model=32, n_layers=2, n_heads=4))
    probe.max_attention_logits(model, torch.randint(0, 40, (1, 5)))
    assert all(not layer.attn.capture_qk and layer.attn.captured_q is None for layer in model.layers)
