"""Standby workers (experiments.backends.local_workers): started before the sweep is planned, they touch
nothing until handed their command line; a launch that ends first leaves no process behind; a slot whose
standby died gets a new worker, and what the dead one printed reaches the log."""

import subprocess
import sys

import pytest

from experiments.backends.local_workers import WORKER, LocalWorkers, StandbyWorkers


class Refused(LocalWorkers):
    def arguments(self, i):
        return [*super().arguments(i), "--no-such-option"]  # argparse refuses it before any import


@pytest.mark.slow
def test_a_standby_worker_whose_input_ends_exits_having_touched_nothing(tmp_path):
    done = subprocess.run([*WORKER, "--standby"], input="", capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == done.stderr == ""
    assert list(tmp_path.iterdir()) == []


def test_cancel_ends_every_standby_worker(tmp_path):
    standby = StandbyWorkers(["cpu", "cpu"]).start()
    processes = [process for process, _ in standby._waiting.values()]
    LocalWorkers(tmp_path / "results", "t", ["cpu", "cpu"], retries=0, stale_after=60.0, heartbeat_every=2.0,
                 standby=standby).cancel()
    assert len(processes) == 2 and all(p.returncode is not None for p in processes)
    assert not (tmp_path / "results").exists()


def test_a_slot_whose_standby_died_gets_a_new_worker_and_the_log_keeps_what_it_printed(tmp_path):
    standby = StandbyWorkers(["cpu"],
                             command=(sys.executable, "-c", "print('died on standby'); raise SystemExit(3)")).start()
    dead = standby._waiting[0][0]
    assert dead.wait() == 3
    workers = Refused(tmp_path / "results", "t", ["cpu"], retries=0, stale_after=60.0, heartbeat_every=2.0,
                      standby=standby)
    replacement = workers.start(0)
    assert replacement is not dead and replacement.wait() == 2
    log = workers.log(0).read_text()
    assert log.startswith("died on standby\n") and "unrecognized arguments: --no-such-option" in log
