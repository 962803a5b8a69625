"""Will it hold at scale? A ladder sweep's fitted scaling curves, their extrapolation, and how often a smaller
rung's decisions match the largest rung's; and, for a sweep with a scale axis, whether an order reverses.

    across       a scale axis: each variant's best result per scale, and the resolved reversals
    reversals    the rule: an order reverses only when resolved, in opposite directions, at two scales
    points       the store → per variant, rung and seed the loss at the rung's best LR, with compute and size
    curve        one curve L = E + A·C^-α, a Huber fit in log space (scipy's least_squares)
    fits         every variant's curve on one axis, with a seed bootstrap
    refit        the bootstrap's refits, every replicate of a variant at once (checked against scipy's)
    extrapolate  loss at a target, gap to the baseline, crossovers, each with its interval
    consistency  DataDecide's pairwise decision accuracy per rung
    analyse      all of it for one sweep: `analyse_ladder` → `LadderAnalysis`

numpy, scipy and pandas only (no torch). Used by `harness compare --ladder`, `harness plot ladder` and the report
when the sweep is a ladder, and never on `harness compare`'s plain path: this file holds two constants and imports
nothing, so asking whether a sweep is a ladder (`points.is_ladder`) does not load the fitting code (docs/analysis.md).
"""

# what a run's rung is (= experiments.declare.ladder.RUNG_FIELDS; analysis imports no experiments)
RUNG_FIELDS = ("d_model", "n_layers")
SEPARATOR = "@"  # a ladder's arm is `<grid arm>@<rung>` (= experiments.plan.rungs.RUNG_SEPARATOR)
