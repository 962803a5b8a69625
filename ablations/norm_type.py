"""RMSNorm or LayerNorm? RMSNorm drops LayerNorm's mean-centring and bias; modern models (Llama, Qwen,
Gemma) use it for speed. Does the proxy lose anything by it? Two seeds per arm, paired by data order."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "norm_type", "Does RMSNorm train as well as LayerNorm?", base="tiny",
    grid=grid(norm=["rmsnorm", "layernorm"]), seeds=2, train=CPU_PROXY, baseline={"norm": "layernorm"},
)
