"""How many key/value heads? Multi-head (4 KV heads), grouped-query (2) and multi-query (1) attention on
the 4 query heads of the tiny model: fewer KV heads shrink the KV cache; what do they cost in loss?"""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "kv_heads", "What does sharing key/value heads (GQA, MQA) cost against MHA?", base="tiny",
    grid=grid(n_kv_heads=[4, 2, 1]), train=CPU_PROXY, baseline={"n_kv_heads": 4},
)
