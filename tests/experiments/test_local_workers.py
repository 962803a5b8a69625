"""Standby workers (experiments.backends.local_workers): started before the plan is stored, they touch nothing
until told to go; a launch that is called off leaves no process behind; one that died on standby is
replaced, and what it printed reaches its log."""

import subprocess

from experiments.backends.local_workers import LocalWorkers


class Broken(LocalWorkers):
    def command(self, i):
        return [*super().command(i), "--no-such-option"]  # argparse refuses it before any import


def pool(tmp_path, slots=("cpu",), kind=LocalWorkers):
    return kind(tmp_path / "results", "t", list(slots), retries=0, stale_after=60.0, heartbeat_every=2.0)


def test_a_standby_worker_whose_input_ends_exits_having_touched_nothing(tmp_path):
    log = tmp_path / "w0.log"
    command = [*pool(tmp_path).command(0), "--standby", str(log)]
    done = subprocess.run(command, input="", capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "results").exists() and not log.exists()


def test_cancel_ends_every_standby_worker(tmp_path):
    workers = pool(tmp_path, slots=("cpu", "cpu"))
    workers.standby()
    processes = [process for process, _ in workers._standby.values()]
    workers.cancel()
    assert len(processes) == 2 and all(p.returncode is not None for p in processes)
    assert not (tmp_path / "results").exists()


def test_a_worker_that_died_on_standby_is_replaced_and_its_output_kept(tmp_path):
    workers = pool(tmp_path, kind=Broken)
    workers.standby()
    standby = workers._standby[0][0]
    standby.wait(timeout=60)
    replacement = workers.start(0)
    assert replacement is not standby and replacement.wait(timeout=60) == 2
    log = workers.log(0).read_text()
    assert log.count("unrecognized arguments: --no-such-option") == 2  # the standby's output, then the replacement's
