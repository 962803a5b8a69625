"""Lightning's SLURM detection stays off outside the harness's own SLURM backend: no `srun` hint per run
once SLURM is installed, and no SLURM environment (whose auto-requeue would race the backend's)."""

import warnings

import pytest
from lightning.pytorch.plugins.environments import LightningEnvironment, SLURMEnvironment

from harness.train.run import SLURM_BACKEND_ENV, cluster_environment


@pytest.mark.slow
def test_no_srun_hint_when_srun_exists(run_tiny, tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "srun"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{__import__('os').environ['PATH']}")
    monkeypatch.delenv(SLURM_BACKEND_ENV, raising=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_tiny("quiet", steps=2)
    assert not [w for w in caught if "srun" in str(w.message)]
    assert isinstance(cluster_environment(), LightningEnvironment)


def test_under_the_slurm_backend_lightning_sees_slurm_without_its_own_requeue(monkeypatch):
    monkeypatch.setenv(SLURM_BACKEND_ENV, "1")
    monkeypatch.setenv("SLURM_NTASKS", "1")
    monkeypatch.setenv("SLURM_JOB_NAME", "harness-worker")
    environment = cluster_environment()
    assert isinstance(environment, SLURMEnvironment) and environment.auto_requeue is False
