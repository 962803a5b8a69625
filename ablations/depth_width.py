"""Deep and narrow or shallow and wide, at the same parameter count: depth and width move together
(1 layer × 96, 2 × 64, 4 × 48) and each arm's MLP hidden size is solved so that it matches the 2-layer
base's parameters exactly enough to compare."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid, zip_

ablation = Ablation(
    "depth_width", "At equal parameters, is depth or width better?", base="tiny",
    grid=grid(zip_(n_layers=[1, 2, 4], d_model=[96, 64, 48])), match="params", solve="d_ff", train=CPU_PROXY,
    baseline={"n_layers": 2},
)
