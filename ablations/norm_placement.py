"""Where does the norm go? Pre-LN (GPT-2 onwards), Post-LN (the original Transformer), sandwich (Gemma 2/3),
reordered (OLMo 2) and the parallel block (PaLM, GPT-J). Xiong et al. (2020) showed Post-LN needs a
learning-rate warmup to train at all, so Post-LN also runs once without warmup."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "norm_placement", "Which norm placement trains best, and does Post-LN need its warmup?", base="tiny",
    grid=grid(norm_position=["pre", "post", "sandwich", "reordered", "parallel"])
    + grid(norm_position="post", warmup_steps=0),
    train=CPU_PROXY, baseline={"norm_position": "pre"},
)
