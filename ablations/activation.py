"""ReLU, GELU, SwiGLU or GeGLU, at matched parameters: a GLU has three matrices where a dense MLP has two,
so every arm's hidden size is solved to the base's parameter count (the 8/3 rule, made exact per arm)."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "activation", "Which MLP activation wins at equal parameters?", base="tiny",
    grid=grid(mlp=["relu", "gelu", "swiglu", "geglu"]), match="params", solve="d_ff", train=CPU_PROXY,
    baseline={"mlp": "gelu"},
)
