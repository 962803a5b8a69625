"""Wortsman et al. (2023): attention-logit growth makes small models diverge at high learning rates, as
large ones do at ordinary ones. Which fix keeps training stable across an LR sweep: QK-norm, an attention
logit soft-cap (Gemma 2's 50), or the output z-loss (PaLM's 1e-4)? Each arm runs at three LRs up to 0.1, so
the LR-sensitivity of each can be read off and a win is not an LR artifact, and on three seeds, so every
comparison gets a confidence interval and a verdict (the README's Quick start runs this sweep). Cells train
300 steps, twice the library's proxy: at 150 the tiny model has barely left its unigram loss (≈ 6.0 nats at
every LR and arm) and nothing separates; at 300 the soft-cap's lead at LR 0.1 is resolved on three seeds."""

from ablations._proxy import CPU_PROXY
from experiments import Ablation, grid

ablation = Ablation(
    "qk_stability", "Does QK-norm, attention soft-capping or z-loss keep training stable across learning rates?",
    base="tiny", grid=grid() + grid(qk_norm="rmsnorm") + grid(attn_softcap=50.0) + grid(z_loss=1e-4),
    lrs=[1e-2, 3e-2, 1e-1], seeds=3, train={**CPU_PROXY, "steps": 300, "val_every": 100, "checkpoint_every": 100},
    primary="attn_logit",
)
