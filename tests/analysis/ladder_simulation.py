"""Simulated ladders with a known truth, for the fits' intervals (tests and docs/analysis.md).

    python tests/analysis/ladder_simulation.py [--replays 100] [--replicates 200] [--shape I]

prints, for ladders of several shapes, how often the 95% intervals of `analysis.ladder` cover the planted
truth: E, A and α of each arm's curve, the loss predicted at a target 100× beyond the largest rung, the gap
between two arms there, and a planted crossover. Each replay draws every run's loss from the planted curves
plus noise (tests/analysis/ladder_synthetic.py) and runs the same functions `harness compare --ladder` runs
(`analysis.ladder.fits`, `analysis.ladder.extrapolate`) on them; the store's part, reading the same numbers
back, is tested on its own (tests/analysis/ladder/test_store.py).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import ladder_synthetic as synthetic  # noqa: E402
from analysis.ladder.extrapolate import extrapolate, resolve_target  # noqa: E402
from analysis.ladder.fits import fit_ladder  # noqa: E402
from analysis.ladder.points import LadderData  # noqa: E402

# Two arms on a ladder of 2× parameters a rung from 200k (`chinchilla_rungs`): the second is worse at every rung
# (0.40 nats at the first, 0.06 at the fifth) but scales better, and its curve crosses the first's at 1e16 FLOPs,
# between the fifth rung (1.2e15) and the default target (1.2e17), where it is 0.045 nats better.
CURVES = {"base": (2.0, 60.0, 0.14), "steeper": (1.9, (0.1 + 60.0 * 1e16 ** -0.14) * 1e16 ** 0.16, 0.16)}
SHAPES = [  # (rungs, seeds, run noise sd)
    (5, 4, 0.01), (4, 3, 0.01), (3, 3, 0.01), (5, 2, 0.02),
]


def arrays(losses: np.ndarray, rungs: list, names: list[str]) -> LadderData:
    """A LadderData of planted losses [V, R, S] at the rungs' compute and parameters."""
    shape = losses.shape[:2]
    compute = np.broadcast_to([rung.compute for rung in rungs], shape).astype(float)
    params = np.broadcast_to([rung.params for rung in rungs], shape).astype(float)
    return LadderData(names, names, [rung.label for rung in rungs], list(range(losses.shape[2])), losses, compute,
                      params, np.full(shape, 1e-3), np.zeros(shape, dtype=int), [])


def crossover_truth(a: tuple, b: tuple) -> float:
    """Where two planted curves cross: scipy's root finder on their difference in log compute (the oracle)."""
    from scipy.optimize import brentq

    root = brentq(lambda x: synthetic.planted_loss(a, np.exp(x)) - synthetic.planted_loss(b, np.exp(x)), np.log(1e10),
                  np.log(1e20))
    return float(np.exp(root))


def replay(rng_seed: int, rungs: int, seeds: int, noise: float, replicates: int) -> dict[str, bool]:
    """One simulated ladder: whether each interval covers its planted truth (the crossover's only when it lies
    before the target: a ladder of 3 rungs reaches 7.7e15 FLOPs by default, short of the planted 1e16)."""
    ladder = synthetic.chinchilla_rungs(rungs)
    curves = list(CURVES.values())
    losses = synthetic.draw_losses(np.random.default_rng(rng_seed), curves, ladder, seeds, noise)
    data = arrays(losses, ladder, list(CURVES))
    fit = fit_ladder(data, "compute", replicates=replicates)
    target = resolve_target(data, "compute", None)
    table = extrapolate(fit, target).to_dict("records")
    truth_at = [synthetic.planted_loss(curve, target.value) for curve in curves]
    covered = {}
    for v, ((e, a, alpha), row) in enumerate(zip(curves, table)):
        for name, value in (("E", e), ("A", a), ("alpha", alpha), ("predicted", truth_at[v])):
            low, high = (row["low"], row["high"]) if name == "predicted" else (row[f"{name}_low"], row[f"{name}_high"])
            covered[f"{name} ({list(CURVES)[v]})"] = bool(low <= value <= high)
    covered["gap"] = bool(table[1]["gap_low"] <= truth_at[1] - truth_at[0] <= table[1]["gap_high"])
    crossover = crossover_truth(*curves)
    if crossover < target.value:  # else the truth is that the curves do not cross in range: nothing to cover
        covered["crossover"] = bool(table[1]["cross_low"] <= crossover <= table[1]["cross_high"])
    return covered


def coverage(replays: int, rungs: int, seeds: int, noise: float, replicates: int,
             first_seed: int = 0) -> dict[str, float]:
    """Share of `replays` seeded replays whose interval covers the truth, per quantity."""
    found = [replay(first_seed + i, rungs, seeds, noise, replicates) for i in range(replays)]
    names = dict.fromkeys(k for h in found for k in h)
    return {name: float(np.mean([hits[name] for hits in found if name in hits])) for name in names}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", type=int, default=100)
    parser.add_argument("--replicates", type=int, default=200)
    parser.add_argument("--shape", type=int, choices=range(len(SHAPES)), help="only this one of SHAPES")
    args = parser.parse_args()
    print(f"planted crossover at {crossover_truth(*CURVES.values()):.3g} FLOPs; {args.replays} replays, "
          f"{args.replicates} bootstrap replicates")
    for rungs, seeds, noise in SHAPES if args.shape is None else [SHAPES[args.shape]]:
        rates = coverage(args.replays, rungs, seeds, noise, args.replicates)
        print(f"{rungs} rungs × {seeds} seeds, noise {noise}: "
              + ", ".join(f"{name} {rate:.1%}" for name, rate in rates.items()), flush=True)


if __name__ == "__main__":
    main()
