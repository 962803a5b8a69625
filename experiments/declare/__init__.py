"""What a researcher writes: an `Ablation` (a question, a base, a grid of switches, LRs, seeds, a budget), its
grid helpers, the search spaces of `tune=`, and finding an ablation by library name or file."""
