"""Every module of the ablation library expands, names its question, and trains every arm for a few steps through a
real sweep worker (in this process, so torch and the corpus are loaded once). One cell per arm: its other LRs train
the same code at another step size, and the 65-cell decision benchmark alone took minutes."""

import pytest

import db
from experiments import expand
from experiments.declare.load import library_names, load_ablation
from experiments.workers.claim_loop import Worker

SMOKE = dict(steps=2, vocab_size=512, seq_len=32, batch_size=4, val_seqs=4, probe_seqs=2, checkpoint_every=2)


def test_the_library_has_every_question_of_the_issue():
    assert set(library_names()) >= {
        "norm_type", "norm_placement", "activation", "kv_heads", "qk_stability", "tied_embeddings", "depth_width",
        "positions", "attention_sinks", "bias", "moe",
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", library_names())
def test_module_runs_every_arm_for_a_few_steps(name, tmp_path, train_data_cfg):
    ablation, source = load_ablation(name)
    assert ablation.name == name and ablation.question.endswith("?")
    data = {"source": train_data_cfg.source, "cache_dir": train_data_cfg.cache_dir,
            "val_tokens": train_data_cfg.val_tokens}
    plan = expand(ablation, seeds=1, overrides={**SMOKE, **data})
    cells = {}
    for cell in plan.cells:
        cells.setdefault(cell.arm, cell)
    results = tmp_path / "results"
    db.write_sweep(results, name, plan.meta(source), [cell.plan_row() for cell in cells.values()])
    assert Worker(results, name, "w0", retries=0, stale_after=60.0).run() == 0
    statuses = db.connect(results).execute(f"SELECT status FROM sweep_cells WHERE sweep = '{name}'").fetchall()
    assert len(statuses) == len(plan.arms) and {s for (s,) in statuses} <= {"completed", "diverged"}
