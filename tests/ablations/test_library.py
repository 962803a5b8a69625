"""Every module of the ablation library expands, names its question, and trains all of its cells for a few
steps through a real sweep worker (in this process, so torch and the corpus are loaded once)."""

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


@pytest.mark.parametrize("name", library_names())
def test_module_runs_every_cell_for_a_few_steps(name, tmp_path, train_data_cfg):
    ablation, source = load_ablation(name)
    assert ablation.name == name and ablation.question.endswith("?")
    data = {"source": train_data_cfg.source, "cache_dir": train_data_cfg.cache_dir, "val_tokens": train_data_cfg.val_tokens}
    plan = expand(ablation, seeds=1, overrides={**SMOKE, **data})
    results = tmp_path / "results"
    db.write_sweep(results, name, plan.meta(source), [cell.plan_row() for cell in plan.cells])
    assert Worker(results, name, "w0", retries=0, stale_after=60.0).run() == 0
    statuses = db.connect(results).execute(f"SELECT status FROM sweep_cells WHERE sweep = '{name}'").fetchall()
    assert len(statuses) == len(plan.cells) and {s for (s,) in statuses} <= {"completed", "diverged"}
