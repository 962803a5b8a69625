"""Selection on the tested metric, simulated: two identical searched arms, and how often the comparison calls the
arm `better` when each seed's outcome is its best trial, and when it is the chosen configuration rerun on fresh
seeds (`Ablation(confirm_seeds=N)`).

    python tests/analysis/confirm_simulation.py [--sweeps 20000]

prints the rates docs/analysis.md quotes. The truth is the construction: the arms are identical and the tuned
parameter does not change the loss, so every `better` is a false finding, and a two-sided test at α = 0.05
calls the arm better in at most 2.5% of sweeps when its inputs are unbiased. Each arm has one study per seed
(`tune_per_seed=True`) of TRIALS trials whose final losses are the seed's offset plus run noise; the baseline's
sampler wandered into a region that diverges on LOST of its TRIALS trials (valued at ℓ₀, so never chosen), so
its per-seed best is a minimum over fewer draws of the same noise, and the arm's looks better by selection
alone. A confirmation reruns the chosen configuration on fresh seeds, which both arms share (paired), with
fresh noise: nothing about it was selected.

The rates are computed twice: with scipy's paired t-test on per-seed outcomes picked here with numpy (the
oracle), and through the functions `harness compare` runs on the rows it reads (`analysis.reading.cells.judged_runs`,
`analysis.comparison.table.comparison_table`).
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats as scipy_stats

from analysis.comparison.pairs import DIVERGED
from analysis.comparison.table import comparison_table
from analysis.reading.cells import Cells, judged_runs

SEEDS, TRIALS, LOST, CONFIRM = 5, 8, 4, 2
NOISE = 0.02  # run-to-run noise of a final loss (nats)
SEED_SPREAD = 0.05  # per-seed offset shared by both arms (what pairing removes)
INITIAL_LOSS = 8.3  # a diverged trial's value
FRESH = 1_000_000  # confirmation i of seed s trains with seed s + (i + 1) · FRESH (experiments.search.study)


def search_sweeps(rng, sweeps: int) -> dict[str, np.ndarray]:
    """Trials [sweeps, SEEDS, TRIALS] (DIVERGED where a trial diverged) and confirmations [sweeps, SEEDS, CONFIRM]
    of the two identical arms."""
    offsets = rng.normal(0, SEED_SPREAD, (sweeps, SEEDS, 1))
    fresh = rng.normal(0, SEED_SPREAD, (sweeps, SEEDS, CONFIRM))
    arm = 3.0 + offsets + rng.normal(0, NOISE, (sweeps, SEEDS, TRIALS))
    baseline = 3.0 + offsets + rng.normal(0, NOISE, (sweeps, SEEDS, TRIALS))
    baseline[..., :LOST] = DIVERGED
    return {"arm": arm, "baseline": baseline,
            "arm_confirm": 3.0 + fresh + rng.normal(0, NOISE, (sweeps, SEEDS, CONFIRM)),
            "baseline_confirm": 3.0 + fresh + rng.normal(0, NOISE, (sweeps, SEEDS, CONFIRM))}


def oracle_p(sim: dict[str, np.ndarray], confirmed: bool) -> tuple[np.ndarray, np.ndarray]:
    """scipy's paired t-test per sweep, (p, mean difference): on each seed's best completed trial, or on the
    confirmations (every fresh seed a pair)."""
    if confirmed:
        arm, baseline = (sim[f"{side}_confirm"].reshape(len(sim["arm"]), -1) for side in ("arm", "baseline"))
    else:
        arm, baseline = sim["arm"].min(axis=-1), sim["baseline"].min(axis=-1)  # DIVERGED is +inf: never the min
    return scipy_stats.ttest_rel(arm, baseline, axis=1).pvalue, (arm - baseline).mean(axis=1)


def oracle_better(sim: dict[str, np.ndarray], confirmed: bool) -> np.ndarray:
    """Per sweep: does the oracle's two-sided test at 0.05 call the arm better?"""
    p, delta = oracle_p(sim, confirmed)
    return (p < 0.05) & (delta < 0)


def sweep_rows(sim: dict[str, np.ndarray], k: int, confirmed: bool) -> list[tuple]:
    """Sweep k as the rows `harness compare` reads (arm, lr, seed, searched, status, value, confirming): every
    trial (the LR is tuned, so lr is None), and with `confirmed` the confirmation cells too."""
    rows = []
    for arm in ("arm", "baseline"):
        for seed in range(SEEDS):
            for value in sim[arm][k, seed]:
                gone = np.isinf(value)
                rows.append((arm, None, seed, True, "diverged" if gone else "completed",
                             INITIAL_LOSS if gone else float(value), False))
            if confirmed:
                rows += [(arm, None, seed + (i + 1) * FRESH, False, "completed", float(value), True)
                         for i, value in enumerate(sim[f"{arm}_confirm"][k, seed])]
    return rows


def compared(sim: dict[str, np.ndarray], confirmed: bool) -> list[dict]:
    """The arm's comparison row of every simulated sweep, as `harness compare` computes it."""
    return [comparison_table(Cells("baseline", *judged_runs(sweep_rows(sim, k, confirmed))))[1]
            for k in range(len(sim["arm"]))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweeps", type=int, default=20_000)
    parser.add_argument("--compared", type=int, default=2_000,
                        help="of those, how many also go through comparison_table")
    args = parser.parse_args()
    sim = search_sweeps(np.random.default_rng(15), args.sweeps)
    print(f"-- identical arms, {SEEDS} per-seed studies of {TRIALS} trials each, the baseline's search lost {LOST} "
          f"of {TRIALS} trials to divergence; run noise sd {NOISE}: share of sweeps calling the arm `better`")
    head = {key: value[:args.compared] for key, value in sim.items()}
    for confirmed, label in ((False, "best trial per seed"), (True, f"confirmed on {CONFIRM} fresh seeds per study")):
        verdicts = [row["verdict"] for row in compared(head, confirmed)]
        print(f"{label}: scipy t-test {oracle_better(sim, confirmed).mean():.4f} of {args.sweeps} sweeps; of the first "
              f"{args.compared}, scipy {oracle_better(head, confirmed).mean():.4f}, harness compare "
              f"{np.mean([v == 'better' for v in verdicts]):.4f}")


if __name__ == "__main__":
    main()
