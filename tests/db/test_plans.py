"""Reading plans while a launch replaces them: cells.parquet and sweep.json are replaced one after the other, so a
reader between the two sees a plan of another length than its description. That is a launch, not damage."""

import threading
import time
import warnings

import pytest

import db
from db.plans import sweep_files


@pytest.mark.slow
def test_a_plan_replaced_while_it_is_read_is_never_taken_for_damage(results, write_run):
    write_run(results, "r0", sweep="s", arm="a")
    plans = [[{"arm": "a", "lr": 1e-3, "seed": s, "run_id": f"r{s}"} for s in range(n)] for n in (2, 3)]
    db.write_sweep(results, "s", {}, plans[0])
    stop, launches = threading.Event(), [0]

    def relaunch():
        while not stop.is_set():
            db.write_sweep(results, "s", {}, plans[launches[0] % 2])
            launches[0] += 1

    writer = threading.Thread(target=relaunch)
    writer.start()
    reads, deadline = 0, time.monotonic() + 3
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", db.CorruptShardWarning)  # a plan left out as damaged fails the test
            while time.monotonic() < deadline or launches[0] < 20 or reads <= 20:
                found = sweep_files(results)
                assert found.damaged == [] and len(found.records) == 1
                assert len(db.read_plan(results, "s")) in (2, 3)
                reads += 1
    finally:
        stop.set()
        writer.join()
    assert reads > 20 and launches[0] >= 20
