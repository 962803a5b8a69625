"""From a declared ablation to the sweep's cells: `expand` in small pure stages (grid points → resolved arms →
LR × seed cells → validation), the `Cell` a worker trains, and arm names."""
