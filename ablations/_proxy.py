"""The training settings every library ablation shares: a CPU-sized proxy run of the `tiny` preset, long
enough for arms to separate and short enough for a whole sweep to take minutes."""

CPU_PROXY = dict(steps=150, batch_size=8, seq_len=64, warmup_steps=15, val_every=50, val_seqs=32, probe_every=25,
                 checkpoint_every=50)
