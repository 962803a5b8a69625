import pytest
import torch

from harness.config.model import ModelConfig
from harness.model.attention import Attention
from harness.model.positions import RotaryPositions, apply_rope
from harness.model.softcap import soft_cap
from harness.model.spec.attention import projections
from harness.model.transformer import build_qk_norms

HEADS = {"mha": (4, 4), "gqa": (4, 2), "mqa": (4, 1)}


def _attention(layer=0, **overrides):
    cfg = ModelConfig(vocab_size=32, d_model=32, n_layers=2, n_heads=4, **overrides)
    torch.manual_seed(0)
    attn = Attention(cfg, layer, projections(cfg, layer), *build_qk_norms(cfg, layer))
    with torch.no_grad():
        for param in attn.parameters():
            param.normal_(std=0.3)
    return cfg, attn


def _reference(attn, x, rotation):
    """Textbook attention with explicit K/V repeats and an explicit softmax (+ sink column)."""
    batch, seq, _ = x.shape
    heads, kv_heads, dim = attn.n_heads, attn.n_kv_heads, attn.head_dim
    q = attn.q_proj(x)
    k = attn.k_proj(x)
    if attn.qk_norm_full:
        q, k = attn.q_norm(q), attn.k_norm(k)
    q = q.view(batch, seq, heads, dim)
    k = k.view(batch, seq, kv_heads, dim)
    if not attn.qk_norm_full:
        q, k = attn.q_norm(q), attn.k_norm(k)
    q, k = q.transpose(1, 2), k.transpose(1, 2)
    v = attn.v_proj(x).view(batch, seq, kv_heads, dim).transpose(1, 2)
    if rotation is not None and attn.uses_rope:
        cos, sin = rotation
        half = dim // 2
        rot = lambda t: t * cos + torch.cat((-t[..., half:], t[..., :half]), -1) * sin  # noqa: E731
        q, k = rot(q), rot(k)
    k = k.repeat_interleave(heads // kv_heads, dim=1)
    v = v.repeat_interleave(heads // kv_heads, dim=1)
    scores = q @ k.transpose(-1, -2) * attn.scale
    if attn.softcap is not None:
        scores = attn.softcap * torch.tanh(scores / attn.softcap)
    i, j = torch.arange(seq)[:, None], torch.arange(seq)[None, :]
    allowed = (j <= i) & ((i - j < attn.window) if attn.window is not None else True)
    scores = scores.masked_fill(~allowed, float("-inf"))
    if attn.sinks is not None:
        sink = attn.sinks.view(1, heads, 1, 1).expand(batch, heads, seq, 1)
        weights = torch.exp(scores - torch.logsumexp(torch.cat((scores, sink), -1), -1, keepdim=True))
    else:
        weights = torch.softmax(scores, dim=-1)
    out = (weights @ v).transpose(1, 2).reshape(batch, seq, heads * dim)
    return attn.o_proj(out)


def _run(cfg, attn, seq=9):
    x = torch.randn(2, seq, cfg.d_model)
    rotation = RotaryPositions(cfg, None, {}).rotation(torch.arange(seq))
    return attn(x, rotation), _reference(attn, x, rotation)


@pytest.mark.parametrize("window", [None, 3])
@pytest.mark.parametrize("heads", sorted(HEADS))
def test_sdpa_path_matches_explicit_softmax(heads, window):
    cfg, attn = _attention(n_kv_heads=HEADS[heads][1], sliding_window=window)
    assert attn.path == "sdpa"
    got, expected = _run(cfg, attn)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("overrides", [
    {"attn_softcap": 2.0}, {"attn_sinks": True}, {"attn_softcap": 1.5, "attn_sinks": True, "sliding_window": 4},
    {"attn_sinks": True, "n_kv_heads": 1}, {"attn_softcap": 3.0, "n_kv_heads": 2, "attn_scale": 0.2},
])
def test_eager_path_matches_reference_with_caps_and_sinks(overrides):
    cfg, attn = _attention(**overrides)
    assert attn.path == "eager"
    got, expected = _run(cfg, attn)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("overrides",
                         [{}, {"n_kv_heads": 2, "sliding_window": 3}, {"n_kv_heads": 1, "attn_scale": 0.3}])
def test_eager_and_sdpa_paths_agree_without_cap_or_sink(overrides):
    cfg, attn = _attention(**overrides)
    x = torch.randn(2, 7, cfg.d_model)
    rotation = RotaryPositions(cfg, None, {}).rotation(torch.arange(7))
    sdpa = attn(x, rotation)
    attn.path = "eager"
    torch.testing.assert_close(attn(x, rotation), sdpa, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("qk_norm", ["rmsnorm", "layernorm"])
@pytest.mark.parametrize("scope", ["head", "full"])
def test_qk_norm_scopes_match_reference(qk_norm, scope):
    cfg, attn = _attention(n_kv_heads=2, qk_norm=qk_norm, qk_norm_scope=scope, bias="all")
    width = cfg.head_dim if scope == "head" else cfg.n_kv_heads * cfg.head_dim
    assert attn.k_norm.weight.shape == (width,)
    got, expected = _run(cfg, attn)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_sinks_only_shrink_attention_weights():
    """A sink absorbs probability mass: with a huge sink the output goes to the o_proj bias (here none) → 0."""
    cfg, attn = _attention(attn_sinks=True)
    with torch.no_grad():
        attn.sinks.fill_(50.0)
    got, _ = _run(cfg, attn)
    torch.testing.assert_close(got, torch.zeros_like(got), atol=1e-6, rtol=0)


def test_soft_cap_reference_values():
    z = torch.tensor([-100.0, -30.0, -10.0, 0.0, 10.0, 30.0, 100.0])
    expected = torch.tensor([-29.92, -22.85, -9.65, 0.00, 9.65, 22.85, 29.92])
    torch.testing.assert_close(soft_cap(z, 30.0).round(decimals=2), expected)


def test_capture_qk_stores_rotated_normalized_q_and_k_before_scaling():
    cfg, attn = _attention(n_kv_heads=2, qk_norm="rmsnorm")
    attn.q_norm.reset_parameters()
    attn.k_norm.reset_parameters()
    attn.capture_qk = True
    x = torch.randn(2, 5, cfg.d_model)
    rotation = RotaryPositions(cfg, None, {}).rotation(torch.arange(5))
    attn(x, rotation)
    assert attn.captured_q.shape == (2, 4, 5, 8) and attn.captured_k.shape == (2, 2, 5, 8)
    assert not attn.captured_q.requires_grad
    # Unit-weight RMSNorm makes each head's RMS 1 and the rotation keeps it: unscaled, normalized, rotated.
    torch.testing.assert_close(attn.captured_q.pow(2).mean(-1), torch.ones(2, 4, 5), rtol=1e-4, atol=0)  # eps
    torch.testing.assert_close(attn.captured_k.pow(2).mean(-1), torch.ones(2, 2, 5), rtol=1e-4, atol=0)
    unrotated = attn.q_norm(attn.q_proj(x).view(2, 5, 4, 8)).transpose(1, 2)
    assert not torch.allclose(attn.captured_q[:, :, 1:], unrotated[:, :, 1:])
    torch.testing.assert_close(attn.captured_q[:, :, 0], unrotated[:, :, 0])  # position 0 is not rotated
    assert attn.scale == 8**-0.5 and attn.softcap is None


@pytest.mark.parametrize("scope", ["head", "full"])
def test_irope_normalizes_after_rope_on_rope_layers_only(scope):
    """Llama 4: rotate, then normalize q and k; NoPE layers (here every 2nd) get no QK-norm at all."""
    overrides = dict(n_kv_heads=2, qk_norm="rmsnorm", qk_norm_scope=scope, qk_norm_placement="irope", nope_every=2)
    cfg, attn = _attention(layer=0, **overrides)
    x = torch.randn(2, 5, cfg.d_model)
    rotation = RotaryPositions(cfg, None, {}).rotation(torch.arange(5))
    attn.capture_qk = True
    attn(x, rotation)
    rotated = apply_rope(attn.q_proj(x).view(2, 5, 4, 8).transpose(1, 2), rotation)  # (B, H, T, D)
    if scope == "head":
        expected = attn.q_norm(rotated)
    else:
        expected = attn.q_norm(rotated.transpose(1, 2).reshape(2, 5, 32)).view(2, 5, 4, 8).transpose(1, 2)
    torch.testing.assert_close(attn.captured_q, expected)
    _, nope_layer = _attention(layer=1, **overrides)
    assert isinstance(nope_layer.q_norm, torch.nn.Identity) and isinstance(nope_layer.k_norm, torch.nn.Identity)
    assert not nope_layer.uses_rope
