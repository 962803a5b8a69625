"""The ablation library: one short module per research question, each defining one `Ablation` that runs on
a CPU with the `tiny` preset in minutes (`harness ablations` lists them; `harness sweep NAME` runs one).
Scale one up with `--preset`, `--steps` and `--set`."""
