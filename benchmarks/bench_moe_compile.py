"""One MoE training step (forward, cross-entropy + aux loss, backward, AdamW) of the `tiny` preset with 4
experts (top-2): eager against `torch.compile` (inductor), same weights, same batches, same process.

Eager runs the sorted dispatch (one matmul per expert over its slice; the host sync breaks a compiled graph);
compiled runs the slotted dispatch (fixed slots per expert, one graph). Without a capacity factor the slots
hold every token (C = N), i.e. E/k = 2× the expert matmuls; `--capacity 1.25` adds the arms with
C = ceil(1.25·N·k/E), which can drop tokens. To separate the dispatch from the compiler, the slotted dispatch
also runs eagerly (capacity factor E/k gives C = N exactly). Reports compile time (first step), then the
median step of `--repeats` interleaved repeats, and the first step's losses (equal dispatches must agree).

    python benchmarks/bench_moe_compile.py [--repeats 20] [--batch 16] [--seq 128] [--threads 1] [--capacity 1.25]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from harness.model import build_model
from harness.presets import from_name


def make_step(model, compiled: bool):
    """A closure doing one training step on `tokens`, returning the loss."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    forward = torch.compile(model) if compiled else model

    def step(tokens: torch.Tensor) -> float:
        logits = forward(tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten()) + 0.01 * model.aux_loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss.item()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--capacity", type=float, default=1.25)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    cfg = from_name("tiny", n_experts=4, moe_top_k=2, max_seq_len=args.seq)
    slotted = cfg.replace(moe_capacity_factor=cfg.n_experts / cfg.moe_top_k)  # C = N: nothing dropped
    arms = {
        "eager (sorted dispatch)": (cfg, False),
        "eager (slotted, C = N)": (slotted, False),
        "compiled (slotted, C = N)": (cfg, True),
    }
    if args.capacity:
        capped = cfg.replace(moe_capacity_factor=args.capacity)
        arms[f"eager (slotted, capacity {args.capacity})"] = (capped, False)
        arms[f"compiled (slotted, capacity {args.capacity})"] = (capped, True)
    generator = torch.Generator().manual_seed(0)
    batches = [torch.randint(0, cfg.vocab_size, (args.batch, args.seq + 1), generator=generator)
               for _ in range(args.repeats + 1)]
    steps, first = {}, {}
    for name, (arm_cfg, compiled) in arms.items():
        torch.manual_seed(0)
        steps[name] = make_step(build_model(arm_cfg), compiled)
        start = time.perf_counter()
        first[name] = (steps[name](batches[0]), time.perf_counter() - start)
    times: dict[str, list[float]] = {name: [] for name in arms}
    for tokens in batches[1:]:
        for name, step in steps.items():  # interleaved, so load changes hit every arm alike
            start = time.perf_counter()
            step(tokens)
            times[name].append(time.perf_counter() - start)
    eager = statistics.median(times["eager (sorted dispatch)"])
    print(f"tiny + 4 experts top-2, batch {args.batch} x seq {args.seq}, {args.threads} thread(s), "
          f"{args.repeats} repeats, torch {torch.__version__}\n")
    print("| arm | first step (s, incl. compile) | first-step loss | median step (ms) | vs eager |")
    print("| --- | --- | --- | --- | --- |")
    for name in arms:
        median = statistics.median(times[name])
        loss, seconds = first[name]
        print(f"| {name} | {seconds:.1f} | {loss:.6f} | {1000 * median:.1f} | {median / eager:.2f}× |")


if __name__ == "__main__":
    main()
