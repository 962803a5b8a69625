"""One vocabulary for workers on both backends: `--workers` counts workers in all, an array element holds
`per_element(G)` of them, a multi-device cell's worker takes that many GPU slots, locally as on SLURM."""

import os

import pytest

from errors import ConfigError
from experiments.backends.devices import worker_slots
from experiments.backends.layout import Layout
from harness.train.placement import Placement


@pytest.mark.parametrize("layout, gpus, per_element, elements", [
    (Layout(), 0, 1, 1),                                             # one CPU worker, one element
    (Layout(workers=6), 0, 1, 6),                                    # six one-worker CPU elements
    (Layout(workers=8, workers_per_device=2), 0, 2, 4),              # two workers on each CPU element
    (Layout(workers=32, workers_per_device=4), 1, 4, 8),             # four workers per GPU, one GPU per element
    (Layout(workers=16, workers_per_device=4), 2, 8, 2),             # …two GPUs per element
    (Layout(workers=4, placement=Placement(2)), 8, 4, 1),            # an element of 8 GPUs: four 2-GPU workers
    (Layout(placement=Placement(4, "fsdp")), 4, 1, 1),               # one worker whose cells span 4 GPUs
])
def test_an_element_holds_workers_by_gpus_per_device_and_devices_per_cell(layout, gpus, per_element, elements):
    assert layout.per_element(gpus) == per_element and layout.elements(gpus) == elements


@pytest.mark.parametrize("make, message", [
    (lambda: Layout(workers=30, workers_per_device=4).elements(1),
     "--workers 30 is not a multiple of the 4 workers an array element holds (--gpus-per-element 1 × "
     "--workers-per-device 4): use 28 or 32."),
    (lambda: Layout(workers=3, placement=Placement(2)).elements(4),
     "--workers 3 is not a multiple of the 2 workers an array element holds (--gpus-per-element 4 / "
     "--devices-per-cell 2): use 2 or 4."),
    (lambda: Layout(placement=Placement(2)).elements(3),
     "--gpus-per-element 3 is not a multiple of --devices-per-cell 2: each worker takes 2 of its element's GPUs."),
    (lambda: Layout(workers_per_device=2, placement=Placement(2)),
     "--workers-per-device 2 and --devices-per-cell 2: a cell on several devices does not share them; give one."),
    (lambda: Layout(workers=0), "--workers 0 is invalid: must be an integer ≥ 1."),
    (lambda: Layout(workers_per_device=0), "--workers-per-device 0 is invalid: must be an integer ≥ 1."),
])
def test_a_layout_an_element_cannot_hold_is_refused_naming_the_options(make, message):
    with pytest.raises(ConfigError) as refused:
        make()
    assert str(refused.value) == message


def test_a_multi_device_worker_takes_consecutive_gpus_as_one_slot():
    gpus = ["0", "1", "2", "3", "4"]
    assert worker_slots(gpus, None, 1, 2) == ["0,1", "2,3"]  # GPU 4 is left over: no worker takes half a cell
    assert worker_slots(gpus, 3, 1, 2) == ["0,1", "2,3", "0,1"]  # more workers than slots share them, as before
    assert worker_slots(gpus[:2], None, 3) == ["0", "0", "0", "1", "1", "1"]
    assert worker_slots(["cpu"], 2, 1, 2) == ["cpu", "cpu"]
    with pytest.raises(ConfigError, match=r"--devices-per-cell 4 needs 4 GPUs; 2 are visible here \(3,5\)\."):
        worker_slots(["3", "5"], None, 1, 4)


@pytest.mark.parametrize("cap", [None, "1", "64", "", "x"])
def test_cpu_workers_share_the_cores_this_process_may_use_at_most_omp_num_threads(monkeypatch, cap):
    from experiments.backends.devices import worker_env
    from experiments.backends.local_workers import threads

    if cap is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", cap)
    cores = len(os.sched_getaffinity(0))
    limit = int(cap) if cap and cap.isdigit() else cores  # an unset or unreadable cap is no cap
    for workers in (1, 2, 3):
        expected = min(limit, max(1, cores // workers))
        got = threads(["cpu"] * workers, 0)
        assert got == expected
        assert worker_env("cpu", got)["OMP_NUM_THREADS"] == str(expected)
    assert threads(["0", "cpu"], 0) == 1  # a GPU worker


@pytest.mark.parametrize("cap, expected", [(None, 8), ("3", 3), ("16", 8)])
def test_a_slurm_tasks_threads_are_its_cpus_at_most_omp_num_threads(monkeypatch, tmp_path, cap, expected):
    from experiments.backends.slurm.task import SweepTask

    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "8")
    if cap is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", cap)
    assert SweepTask(tmp_path, "s", layout=Layout(), retries=0, stale_after=60.0)._threads() == expected
