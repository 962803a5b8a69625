"""One training step (forward, cross-entropy, backward, AdamW) of the `llama3` preset: ours vs transformers'
LlamaForCausalLM with the identical config and weights, in the same process with interleaved repeats.

Memory, three ways: the activations autograd saves for backward (exact, deterministic: unique storages seen by
saved-tensor hooks, parameters excluded); the peak of bytes allocated by torch during one step above the step's
start (exact, deterministic: the running sum of every allocation and free the profiler records, in order); and
the peak RSS growth over three steps, each model in its own fresh subprocess (median of three subprocesses,
since glibc's allocator makes single RSS readings vary by ±5%).
Prints a markdown table for docs/benchmarks.md.

    python benchmarks/bench_train_step_vs_hf.py [--repeats 10] [--batch 8] [--seq 256] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

from harness.model import build_model
from harness.presets import from_name


def hf_config(cfg) -> LlamaConfig:
    """The LlamaConfig that describes the same architecture as our `cfg`."""
    # attn_implementation reaches PreTrainedConfig through kwargs that LlamaConfig's typed signature leaves out.
    return LlamaConfig(  # type: ignore[call-arg]
        vocab_size=cfg.vocab_size, hidden_size=cfg.d_model, intermediate_size=cfg.d_ff,
        num_hidden_layers=cfg.n_layers, num_attention_heads=cfg.n_heads, num_key_value_heads=cfg.n_kv_heads,
        head_dim=cfg.head_dim, rms_norm_eps=cfg.norm_eps, max_position_embeddings=cfg.max_seq_len,
        rope_parameters={"rope_type": "default", "rope_theta": cfg.rope_theta}, tie_word_embeddings=False,
        attention_bias=False, mlp_bias=False, attn_implementation="sdpa",
    )


def hf_twin(ours) -> LlamaForCausalLM:
    """LlamaForCausalLM with our config and a copy of our weights."""
    hf = LlamaForCausalLM(hf_config(ours.cfg))
    renames = {
        "tok_emb.": "model.embed_tokens.", "final_norm.": "model.norm.", "layers.": "model.layers.",
        ".attn.": ".self_attn.", ".norm_attn_in.": ".input_layernorm.", ".norm_mlp_in.": ".post_attention_layernorm.",
    }
    state = {}
    for name, tensor in ours.state_dict().items():
        for old, new in renames.items():
            name = name.replace(old, new) if old.startswith(".") or name.startswith(old) else name
        state[name] = tensor.clone()
    missing, unexpected = hf.load_state_dict(state, strict=False)
    assert not unexpected and all("rotary" in m for m in missing), (missing, unexpected)
    return hf


def logits_of(model, tokens):
    out = model(tokens)
    return out if isinstance(out, torch.Tensor) else out.logits


def make_step(model, tokens):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step() -> tuple[float, float]:
        """(wall seconds, CPU seconds of this process) of one step."""
        start, start_cpu = time.perf_counter(), time.process_time()
        logits = logits_of(model, tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return time.perf_counter() - start, time.process_time() - start_cpu

    return step


def batch_of(cfg, args) -> torch.Tensor:
    return torch.randint(0, cfg.vocab_size, (args.batch, args.seq + 1), generator=torch.Generator().manual_seed(1))


def current_rss_kib() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() // 1024


def measure_memory(args) -> None:
    """Child process: peak RSS (MiB) above the built model over three steps of one model (weights don't matter)."""
    cfg = from_name("llama3")
    model = build_model(cfg) if args.memory_of == "ours" else LlamaForCausalLM(hf_config(cfg))
    tokens = batch_of(cfg, args)
    step = make_step(model, tokens)
    before = current_rss_kib()
    for _ in range(3):
        step()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(json.dumps({"peak_growth_mib": (peak - before) / 1024}))


def child_memory(which: str, args, runs: int = 3) -> float:
    """Median over fresh subprocesses of the peak RSS growth of `which` model's steps."""
    command = [sys.executable, __file__, "--memory-of", which, "--batch", str(args.batch), "--seq", str(args.seq),
               "--threads", str(args.threads)]
    readings = []
    for _ in range(runs):
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        readings.append(json.loads(out.strip().splitlines()[-1])["peak_growth_mib"])
    return statistics.median(readings)


def saved_activation_mib(model, tokens) -> float:
    """MiB of the distinct non-parameter storages autograd keeps for backward during one forward and loss."""
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in parameters:
            saved[storage.data_ptr()] = storage.nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        logits = logits_of(model, tokens[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), tokens[:, 1:].flatten())
    loss.backward()
    model.zero_grad(set_to_none=True)
    return sum(saved.values()) / 2**20


def peak_allocated_mib(step) -> float:
    """MiB: the highest point of torch's allocated bytes during one step, above where the step started."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    current = peak = 0
    for event in sorted(prof.events(), key=lambda event: event.time_range.start):
        current += event.self_cpu_memory_usage  # + allocated, - freed ("[memory]" events: outside any op)
        peak = max(peak, current)
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=256)
    # One thread by default: CPU time of a single-threaded step is robust to other processes on the machine.
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--memory-of", choices=["ours", "hf"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if args.memory_of:
        measure_memory(args)
        return

    torch.manual_seed(0)
    ours = build_model(from_name("llama3"))
    hf = hf_twin(ours)
    tokens = batch_of(ours.cfg, args)
    with torch.no_grad():
        diff = (logits_of(ours, tokens) - logits_of(hf, tokens)).abs().max().item()
    assert diff <= 1e-4, f"logits differ by {diff}: the comparison would be meaningless"
    steps = {"ours": make_step(ours, tokens), "hf": make_step(hf, tokens)}
    for step in steps.values():
        step()  # warm-up: allocator, AdamW state
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in steps}  # (wall, CPU) seconds
    for _ in range(args.repeats):
        for name, step in steps.items():
            times[name].append(step())
    wall = {name: statistics.median(t[0] for t in values) for name, values in times.items()}
    cpu = {name: statistics.median(t[1] for t in values) for name, values in times.items()}
    # Paired: each repeat times ours and HF back to back, so slow phases of the machine hit both.
    paired = {kind: statistics.median(o[kind] / h[kind] for o, h in zip(times["ours"], times["hf"])) for kind in (0, 1)}
    allocated = {name: peak_allocated_mib(step) for name, step in steps.items()}
    memory = {name: child_memory(name, args) for name in steps}
    activations = {"ours": saved_activation_mib(ours, tokens), "hf": saved_activation_mib(hf, tokens)}

    print(f"llama3 preset, batch {args.batch} × seq {args.seq}, {args.threads} threads, {args.repeats} interleaved "
          f"repeats; max |logit diff| before training {diff:.2e}\n")
    print("| model | median step wall (s) | median step CPU (s) | saved activations (MiB) "
          "| peak allocated in a step (MiB) | peak RSS growth (MiB, median of 3) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, label in (("ours", "harness"), ("hf", "transformers LlamaForCausalLM")):
        print(f"| {label} | {wall[name]:.3f} | {cpu[name]:.3f} | {activations[name]:.0f} | {allocated[name]:.1f} "
              f"| {memory[name]:.0f} |")
    ratio = lambda values: values["ours"] / values["hf"]  # noqa: E731
    print(f"| **ours / HF** (time: median of paired ratios) | **{paired[0]:.3f}×** | **{paired[1]:.3f}×** "
          f"| **{ratio(activations):.3f}×** | **{ratio(allocated):.3f}×** | **{ratio(memory):.3f}×** |")


if __name__ == "__main__":
    main()
