"""`harness sweep`'s exit code is read from the store after the workers end: 0 when every cell has a result,
3 (naming them) when cells are left, 1 when some failed past their retries; a late segment of a fenced-out
writer does not make a finished cell look left."""

import pytest

import db
from db.outcomes import SupersededError
from experiments import expand
from experiments.backends.local import LocalSweep
from experiments.backends.local_workers import LocalWorkers
from experiments.declare.load import load_ablation


def stored_plan(path, results):
    ablation, source = load_ablation(str(path))
    plan = expand(ablation, overrides={"vocab_size": 512})
    db.write_sweep(results, plan.name, plan.meta(source), [c.plan_row() for c in plan.plan_cells])
    return plan.cells


def finish(results, retries=0):
    workers = LocalWorkers(results, "t", ["cpu"], retries=retries, stale_after=60.0, heartbeat_every=2.0)
    return LocalSweep(workers, progress=False, report=None)._finish()


def close(results, run_id, status, claim, resume=False):
    db.RunWriter.open(results, run_id, resume=resume, resume_from_step=0 if resume else None, claim=claim).close(status)


def test_the_exit_code_and_the_cells_left_come_from_the_store(tmp_path, ablation_file, capsys):
    results = tmp_path / "results"
    cells = stored_plan(ablation_file(seeds=2), results)
    assert len(cells) == 4
    close(results, cells[0].run_id, "completed", claim=1)
    with pytest.raises(SupersededError):  # a stalled writer woke late: refused
        close(results, cells[0].run_id, "interrupted", claim=0, resume=True)
    close(results, cells[1].run_id, "completed", claim=0)
    assert finish(results) == 3
    err = capsys.readouterr().err
    assert "2 cells left after the workers ended (exit 3)" in err
    for cell in cells[2:]:
        assert f"left: cell {cell.index} " in err and cell.run_id in err
    assert cells[0].run_id not in err

    close(results, cells[2].run_id, "completed", claim=0)
    close(results, cells[3].run_id, "failed", claim=0)
    assert finish(results, retries=0) == 1  # failed past its retries: finished, not left
    assert f"failed: cell {cells[3].index}" in capsys.readouterr().err
    close(results, cells[3].run_id, "completed", claim=1, resume=True)
    assert finish(results, retries=0) == 0
