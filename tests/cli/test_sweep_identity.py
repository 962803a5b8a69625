"""settle_plan: the cell order is no part of a sweep's plan, so a plan stored in another order is the same plan."""

import db
from cli.sweep_identity import settle_plan
from experiments import Ablation, expand, grid


def test_a_plan_stored_arm_major_is_the_same_plan(tmp_path):
    """A store written before cells were interleaved: relaunching its ablation changes nothing and writes nothing."""
    plan = expand(Ablation(name="t", question="does it help?", base="tiny", grid=grid(qk_norm=["none", "rmsnorm"]),
                           lrs=[1e-3, 1e-2], seeds=2, train={"steps": 7}))
    rows = sorted((cell.plan_row() for cell in plan.plan_cells), key=lambda r: (r["arm"], r["lr"], r["seed"]))
    db.write_sweep(tmp_path, plan.name, plan.meta("t.py"), [{**row, "cell": i} for i, row in enumerate(rows)])
    stored = {p.name: p.read_bytes() for p in (tmp_path / "sweeps" / "t").iterdir()}
    write = settle_plan(plan, "t.py", tmp_path, replace=False)
    write()
    assert {p.name: p.read_bytes() for p in (tmp_path / "sweeps" / "t").iterdir()} == stored
    stored = [r["arm"] for r in db.read_plan(tmp_path, "t").to_pylist()]
    assert stored == ["base"] * 4 + ["qk_norm=rmsnorm"] * 4  # as stored
