import pytest
import torch

from harness.config.model import ModelConfig
from harness.model import KVCache, build_model

BASE = dict(vocab_size=53, d_model=32, n_layers=3, n_heads=4, max_seq_len=32)
ARMS = {
    "gqa": {"n_kv_heads": 2},
    "mqa_qknorm_full": {"n_kv_heads": 1, "qk_norm": "rmsnorm", "qk_norm_scope": "full"},
    "sliding_window": {"n_kv_heads": 2, "sliding_window": 3, "global_every": 3},
    "sinks": {"attn_sinks": True, "sliding_window": 4},
    "softcap": {"attn_softcap": 2.0, "final_softcap": 5.0, "n_kv_heads": 2},
    "learned_positions": {"positions": "learned", "norm": "layernorm", "bias": "all", "mlp": "gelu"},
    "nope_every": {"nope_every": 2},
    "moe": {"n_experts": 4, "moe_top_k": 2},
    "parallel": {"norm_position": "parallel"},
    "parallel_two_norms": {"norm_position": "parallel_two_norms", "norm": "layernorm"},
    "window_1": {"sliding_window": 1, "global_every": 2},
    "rope_local_theta": {"sliding_window": 3, "global_every": 3, "rope_local_theta": 20.0, "rope_theta": 1e6},
    "irope_llama3": {"qk_norm": "rmsnorm", "qk_norm_placement": "irope", "nope_every": 2, "rope_type": "llama3",
                     "rope_original_max_seq_len": 8},
}  # not moe_capacity_factor: capacity is per forward pass, so a one-token step drops differently


@pytest.mark.slow
@pytest.mark.parametrize("arm", sorted(ARMS))
def test_cached_decoding_matches_full_forward(arm):
    torch.manual_seed(0)
    model = build_model(ModelConfig(**BASE, **ARMS[arm])).eval()
    with torch.no_grad():
        for param in model.parameters():
            param.add_(torch.randn_like(param) * 0.1)  # away from init, so masks and caps matter
        tokens = torch.randint(0, 53, (2, 12))
        full = model(tokens)  # (B, T, V)
        cache = KVCache()
        # A 5-token prompt, then one token per step, then a 3-token chunk: every shape a cache sees.
        pieces = [model(tokens[:, :5], cache)]
        pieces += [model(tokens[:, t : t + 1], cache) for t in range(5, 9)]
        pieces.append(model(tokens[:, 9:], cache))
    assert cache.seq_len == 12
    torch.testing.assert_close(torch.cat(pieces, dim=1), full, rtol=1e-4, atol=1e-5)


def test_windowed_layers_keep_only_the_window():
    """Over 4× the window, a local layer holds window - 1 positions and a global one all of them."""
    torch.manual_seed(0)
    model = build_model(ModelConfig(**BASE, sliding_window=4, global_every=3)).eval()
    tokens = torch.randint(0, 53, (1, 16))
    cache = KVCache()
    with torch.no_grad():
        model(tokens[:, :3], cache)
        for t in range(3, 16):
            model(tokens[:, t : t + 1], cache)
    assert cache.seq_len == 16
    assert [cache.keys[layer].shape[2] for layer in range(3)] == [3, 3, 16]  # layer 3 (1-based) is global
    assert [cache.values[layer].shape[2] for layer in range(3)] == [3, 3, 16]


def test_reorder_selects_rows_in_every_layer():
    cache = KVCache()
    keys = torch.arange(3.0).view(3, 1, 1, 1).expand(3, 2, 4, 5)
    for layer in range(2):
        cache.update(layer, keys, keys + 10)
    cache.reorder(torch.tensor([2, 2, 0]))
    for layer in range(2):
        assert cache.keys[layer][:, 0, 0, 0].tolist() == [2.0, 2.0, 0.0]
        assert cache.values[layer][:, 0, 0, 0].tolist() == [12.0, 12.0, 10.0]
