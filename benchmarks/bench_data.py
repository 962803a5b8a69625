"""Data-pipeline costs: preparing the default corpus cold and warm, and fetching one training batch.

    python benchmarks/bench_data.py [--vocab 4096] [--batch 16] [--seq 128] [--fetches 5000]

Cold: an empty cache directory, so the corpus is read (stdlib parse), the tokenizer trained and the
corpus encoded; then each of the three steps timed alone. Warm: the same call again in the same process
(manifest, tokenizer and token memmap reused, nothing rebuilt). Fetch: `TokenDataModule.train_batch(i)`
for consecutive i, as training does.
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from harness.config import DataConfig
from harness.data import TokenDataModule, prepare
from harness.data.default_corpus import default_documents
from harness.data.token_cache import encode_to_file, token_dtype
from harness.data.tokenizer import train_tokenizer


def timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--fetches", type=int, default=5000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as cache:
        cfg = DataConfig(cache_dir=cache)
        cold, cold_s = timed(prepare, cfg, args.vocab)
        warm, warm_s = timed(prepare, cfg, args.vocab)
        assert cold.built == ("corpus", "tokenizer", "tokens") and warm.built == ()
        documents, read_s = timed(default_documents.__wrapped__)  # the uncached parse
        tokenizer, train_s = timed(train_tokenizer, documents, args.vocab, cfg.tokenizer_train_chars)
        _, encode_s = timed(encode_to_file, tokenizer, documents, token_dtype(args.vocab), Path(cache) / "bench.tokens")
        module = TokenDataModule(warm, args.seq, args.batch, seed=0)
        module.train_batch(0)
        fetch_s = []
        for index in range(args.fetches):
            _, seconds = timed(module.train_batch, index)
            fetch_s.append(seconds)

    print(f"default corpus: {cold.n_documents} documents, {cold.n_chars:,} chars, {cold.n_tokens:,} tokens (vocab "
          f"{args.vocab})")
    print("| step | time |")
    print("| --- | --- |")
    print(f"| prepare, cold cache (read + train tokenizer + encode) | {cold_s:.2f} s |")
    print(f"| … read the default corpus (parse the stdlib) | {read_s:.2f} s |")
    print(f"| … train the tokenizer | {train_s:.2f} s |")
    print(f"| … encode the corpus ({cold.n_tokens / encode_s / 1e6:.2f} M tokens/s) | {encode_s:.2f} s |")
    print(f"| prepare, warm cache | {warm_s * 1e3:.1f} ms |")
    print(f"| train batch B={args.batch} T={args.seq}, median of {args.fetches} | "
          f"{statistics.median(fetch_s) * 1e6:.0f} µs |")
    print(f"| train batch, 99th percentile | {statistics.quantiles(fetch_s, n=100)[98] * 1e6:.0f} µs |")


if __name__ == "__main__":
    main()
