"""How should the model know where a token is? Rotary embeddings (RoPE) at two bases, no positional signal
at all (NoPE: causal masking alone leaks order), RoPE with every second layer position-free (iRoPE, as in
Llama 4), or GPT-2's learned absolute embeddings."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "positions", "Which position encoding trains best: RoPE (and its theta), NoPE, iRoPE or learned?", base="tiny",
    grid=grid(positions=["rope", "nope", "learned"]) + grid(rope_theta=500000.0) + grid(nope_every=2),
    train=CPU_PROXY, baseline={"positions": "rope", "rope_theta": 10000.0, "nope_every": 0},
)
