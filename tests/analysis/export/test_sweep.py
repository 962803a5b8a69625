import pytest

from analysis.errors import AnalysisError
from analysis.export import export_sweep
from planted_store import RUNS, SWEEP


def test_the_progress_wrapper_sees_every_run_with_the_total(planted, tmp_path):
    seen = []

    def progress(items, **options):
        seen.append(options)
        for item in items:
            seen.append(item.run_id)
            yield item

    exported = export_sweep(planted[0], SWEEP, "tensorboard", tmp_path, progress=progress)
    assert seen[0] == {"total": len(RUNS), "desc": "export to TensorBoard", "unit": "run"}
    assert sorted(seen[1:]) == sorted(RUNS) and (exported.runs, exported.arms) == (len(RUNS), 2)


def test_an_unknown_tracker_is_named_with_the_closest_one(planted, tmp_path):
    with pytest.raises(AnalysisError, match="no tracker named 'tensorbord'; did you mean 'tensorboard'"):
        export_sweep(planted[0], SWEEP, "tensorbord", tmp_path / "out")
    assert not (tmp_path / "out").exists()
