"""Tie the output projection to the input embedding (GPT-2, Gemma, small Llamas) or learn it separately?
At this scale the embedding is a large share of the parameters, so untying adds many of them."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "tied_embeddings", "Do untied output embeddings earn their extra parameters?", base="tiny",
    grid=grid(tie_embeddings=[True, False]), seeds=2, train=CPU_PROXY, baseline={"tie_embeddings": True},
)
