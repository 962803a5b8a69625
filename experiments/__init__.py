"""experiments: expand ablation grids into cells, validate and schedule them (sweeps are a later issue)."""
