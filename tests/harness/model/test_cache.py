"""What the cache keeps. That cached decoding gives the full forward's logits is a registry check
(tests/harness/model/test_registry.py, `check_cached_decoding`), run for every registered value, every value
switch and every pair of settings."""

import torch

from harness.config.model import ModelConfig
from harness.model import KVCache, build_model

BASE = dict(vocab_size=53, d_model=32, n_layers=3, n_heads=4, max_seq_len=32)


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
