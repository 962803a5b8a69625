"""A shared synthetic store with planted effects (written once per session through `db.RunWriter`)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # `synthetic` is shared with benchmarks/bench_analysis.py

import synthetic  # noqa: E402


@pytest.fixture(scope="session")
def planted_store(tmp_path_factory):
    """(results dir, planted finals) of sweep 'planted': one LR (1e-3), the arms of synthetic.PLANTED."""
    results = tmp_path_factory.mktemp("planted") / "results"
    finals = synthetic.write_planted(results, "planted", synthetic.PLANTED, lrs=(1e-3,), diverged=synthetic.DIVERGED,
                                     spikes=(20,), logit_growth=4.0)
    return results, finals


@pytest.fixture(scope="session")
def ladder_store(tmp_path_factory):
    """(results dir, planted losses [arm, rung, seed]) of sweep 'lad': tests/analysis/ladder_simulation.py's two arms
    (base; steeper, worse at every rung, crossing base at 1e16 FLOPs) at 4 rungs, 3 seeds and two LRs (the second
    0.05 worse), written through db.RunWriter; seed 2 of steeper diverges at the first rung."""
    import ladder_simulation
    import ladder_synthetic

    results = tmp_path_factory.mktemp("ladder") / "results"
    planted = ladder_synthetic.write_ladder(results, "lad", ladder_simulation.CURVES,
                                            ladder_synthetic.chinchilla_rungs(4), seeds=3, noise=0.01, lrs=(1e-3, 3e-3),
                                            diverged={("steeper", 0, 2)})
    return results, planted


SPREAD_GROWTH = {"base": (10.0, 300.0, 3000.0), "qk": (2.0, 2.0, 2.0)}


@pytest.fixture(scope="session")
def spread_store(tmp_path_factory):
    """Results dir of sweep 'sp': arm base's three seeds grow their logits by SPREAD_GROWTH (decades apart at the
    last step, 59), qk's by 2×; a loss spike at step 7 of every run. Layer 0's max attention logit at the last step
    is 5·growth + 1 (synthetic.write_run, head 1)."""
    results = tmp_path_factory.mktemp("spread") / "results"
    for arm, growths in SPREAD_GROWTH.items():
        for seed, growth in enumerate(growths):
            synthetic.write_run(results, f"sp-{arm}-{seed}", sweep="sp", arm=arm, seed=seed, lr=1e-3,
                                final=3.0 + 0.01 * seed, steps=60, logit_growth=growth, spikes=(7,))
    return results
