"""Searches inside an arm (`Ablation(tune=...)`): one Optuna study per arm (and seed), whose trials and
confirmation cells are ordinary cells, and the pruning callback."""
