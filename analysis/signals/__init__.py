"""Per-arm signals beside the loss: what an ablation's question is about, and how an arm behaves across LRs.

    primary      the signal `Ablation(primary=...)` names, summarized per arm for the report's answer
    sensitivity  LR sensitivity (Wortsman et al. 2023): how much loss an arm loses away from its best LR
    stability    spikes, divergences, attention-logit peaks and output-logit growth

Each reads a sweep's frames (`analysis.reading.frames`); this file imports nothing.
"""
