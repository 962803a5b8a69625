"""Simulated decision benchmarks with a known truth, for the intervals of `harness decisions` (tests, docs).

    python tests/analysis/decisions_simulation.py [--replays 200] [--replicates 1000] [--borderline]

Each replay draws a benchmark of planted decisions (`SCENARIOS`: per decision the true loss difference of its
second variant from its first at each rung; tests/analysis/decisions_synthetic.py adds a shared per-seed offset
and run noise) and runs `analysis.ladder.decisions.decision_accuracy` on it, the code `harness decisions` runs.
The **planted accuracy** of a rung is what its interval estimates: the share of the decisions the replay's
reference rung decides whose planted difference at the rung has the sign of the reference's order (a zero
difference agrees with no order). Printed per rung: the mean planted and estimated accuracy and the share of
replays whose 95% interval covers the planted accuracy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import decisions_synthetic as planted  # noqa: E402
import ladder_synthetic as synthetic  # noqa: E402
from analysis.ladder.decisions import decision_accuracy  # noqa: E402

NOISE = 0.01
SEEDS = 3
# Per decision, the second variant's true loss minus the first's at each of 4 rungs (negative: the second wins).
SCENARIOS = {
    "clear": [[-0.04] * 4] * 4,  # the same winner at every rung
    "flips at rung 1": [[0.03, -0.03, -0.03, -0.04]] * 3,
    "flips at rung 2": [[0.03, 0.03, -0.03, -0.04]] * 2,
    "borderline below": [[-0.005, -0.01, -0.02, -0.04]] * 2,  # a small rung's seeds often order it wrongly
    "null": [[0.0] * 4],  # the reference rarely resolves it: counted apart
}
GAPS = [gaps for group in SCENARIOS.values() for gaps in group]
# A harder benchmark: every decision small below the reference (±0.005 to ±0.015, one to three paired standard
# deviations of a three-seed mean), so that most small-rung picks are near coin tosses.
BORDERLINE = [[sign * step, -sign * step, sign * step, -0.04] for step in (0.005, 0.01, 0.015) for sign in (1, -1)] * 2


def planted_accuracy(gaps: np.ndarray, order: np.ndarray, rung: int) -> float:
    """The share of the decisions with an order (±1; 0: not scored) whose planted gap at the rung has its sign."""
    scored = order != 0
    return float((np.sign(gaps[scored, rung]) == order[scored]).mean())


def replay(rng_seed: int, replicates: int, gaps=GAPS) -> list[tuple[float, float, bool, float]]:
    """Per rung below the reference: (planted accuracy, estimate, whether the interval covers it, its width)."""
    rungs = synthetic.chinchilla_rungs(len(gaps[0]))
    data = planted.runs_in_memory(gaps, rungs, np.random.default_rng(rng_seed), SEEDS, NOISE)
    found = decision_accuracy(data, replicates=replicates)
    order = {row.sweep: {"better": -1, "more stable": -1, "worse": 1, "less stable": 1}.get(row.verdict, 0)
             for row in found.decisions.itertuples() if row.reference == "decided"}
    orders = np.array([order.get(f"d{k}", 0) for k in range(len(gaps))])
    out = []
    for r, row in enumerate(found.rungs.itertuples()):
        truth = planted_accuracy(np.asarray(gaps), orders, r)
        out.append((truth, row.accuracy, bool(row.low <= truth <= row.high), row.high - row.low))
    return out


def coverage(replays: int, replicates: int, first_seed: int = 0, gaps=GAPS) -> list[dict[str, float]]:
    """Per rung: mean planted accuracy, mean estimate, the share of replays whose interval covers the truth and the
    interval's mean width."""
    found = np.array([replay(first_seed + i, replicates, gaps) for i in range(replays)], dtype=float)  # [N, R, 4]
    return [{"planted": float(f[:, 0].mean()), "estimate": float(f[:, 1].mean()), "covered": float(f[:, 2].mean()),
             "width": float(f[:, 3].mean())} for f in found.transpose(1, 0, 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replays", type=int, default=200)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--borderline", action="store_true", help="the harder benchmark, BORDERLINE, instead of GAPS")
    args = parser.parse_args()
    gaps = BORDERLINE if args.borderline else GAPS
    print(f"{len(gaps)} decisions, {SEEDS} seeds, run noise {NOISE}; {args.replays} replays × {args.replicates} "
          "replicates")
    for r, row in enumerate(coverage(args.replays, args.replicates, gaps=gaps)):
        print(f"rung {r}: planted {row['planted']:.3f}  estimate {row['estimate']:.3f}  covered {row['covered']:.1%}  "
              f"width {row['width']:.3f}")


if __name__ == "__main__":
    main()
