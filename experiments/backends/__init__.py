"""How workers start: local processes (one or K per device) or a SLURM job array through submitit. Every
backend runs the same worker claim loop; the store, not the backend, says what is finished."""
