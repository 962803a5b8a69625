"""KV-cache memory while decoding past a sliding window: a windowed model decodes 4× its window one token at a
time, and at each multiple of the window we read the bytes the cache's tensors hold (unique storages, so a
view pinning a larger buffer counts in full) next to `harness.calc.kv_cache_bytes`. The same weights without
a window are the reference that keeps every position.

    python benchmarks/bench_decode_window.py [--window 64] [--multiple 4] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import torch

from harness import calc
from harness.model import KVCache, build_model
from harness.presets import from_name


def cache_bytes(cache: KVCache) -> int:
    """Bytes of the distinct storages behind every cached key and value tensor."""
    storages = {}
    for tensors in (cache.keys, cache.values):
        for tensor in tensors.values():
            storage = tensor.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes()
    return sum(storages.values())


def decode(cfg, state: dict, length: int, window: int) -> tuple[list[int], float]:
    """Feed `length` tokens one at a time; the cache's bytes after every `window` tokens, and µs per token."""
    model = build_model(cfg).eval()
    model.load_state_dict(state)
    tokens = torch.randint(0, cfg.vocab_size, (1, length), generator=torch.Generator().manual_seed(0))
    cache, readings = KVCache(), []
    start = time.perf_counter()
    with torch.no_grad():
        for t in range(length):
            model(tokens[:, t : t + 1], cache)
            if (t + 1) % window == 0:
                readings.append(cache_bytes(cache))
    return readings, 1e6 * (time.perf_counter() - start) / length


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", type=int, default=64)
    parser.add_argument("--multiple", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    length = args.window * args.multiple
    base = from_name("tiny", n_layers=4, max_seq_len=length)
    arms = {
        f"all layers windowed (W = {args.window})": base.replace(sliding_window=args.window),
        "windowed, every 2nd layer global": base.replace(sliding_window=args.window, global_every=2),
        "no window (reference)": base,
    }
    torch.manual_seed(0)
    state = build_model(base).state_dict()
    columns = [f"{k}·W" for k in range(1, args.multiple + 1)]
    print(f"tiny preset, 4 layers, 2 KV heads × head_dim 16, float32; decoding {length} tokens one at a time\n")
    print(f"| arm | cache bytes at {', '.join(columns)} | calc.kv_cache_bytes at {length} (fp32) | µs/token |")
    print("| --- | --- | --- | --- |")
    for name, cfg in arms.items():
        readings, per_token = decode(cfg, state, length, args.window)
        print(f"| {name} | {', '.join(f'{b:,}' for b in readings)} | {calc.kv_cache_bytes(cfg, length, 'fp32'):,} "
              f"| {per_token:.0f} |")


if __name__ == "__main__":
    main()
