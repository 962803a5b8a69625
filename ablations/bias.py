"""Biases: none (Llama), on the query/key/value projections only (Qwen2), or on every linear layer and
LayerNorm (GPT-2). Modern recipes drop them; is anything lost?"""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "bias", "Do linear-layer biases (none, QKV only, all) matter?", base="tiny",
    grid=grid(bias=["none", "qkv", "all"]), train=CPU_PROXY, baseline={"bias": "none"},
)
