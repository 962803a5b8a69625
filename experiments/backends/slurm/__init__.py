"""The SLURM backend: the submitit launcher, the task each array element runs, and where its logs live."""
