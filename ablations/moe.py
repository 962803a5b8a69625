"""Dense MLP against a 4-expert top-2 mixture of experts of the same expert size: the MoE holds four times
the MLP parameters but each token runs through two experts. Is the extra capacity worth it at this scale?"""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "moe", "Does a top-2 mixture of 4 experts beat the dense MLP?", base="tiny",
    grid=grid(n_experts=[1, 4]), train=CPU_PROXY, baseline={"n_experts": 1},
)
