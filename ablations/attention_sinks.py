"""A learned per-head sink logit in the softmax denominator (gpt-oss) lets a head attend to nothing. Does it
change loss, or only the attention statistics (max logit) the telemetry records?"""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "attention_sinks", "Do learned attention sinks help?", base="tiny",
    grid=grid(attn_sinks=[False, True]), seeds=2, train=CPU_PROXY, baseline={"attn_sinks": False},
)
