"""Chaos: two rounds of a 12-cell sweep whose workers are paused, woken and killed at random moments (seeded).
After each round no cell has two results, the exit code agrees with the store, and the same command then
finishes every cell left, so none is lost."""

import os
import random
import signal
import time

import db

from .conftest import start_sweep
from .stalls import FAST, raw_results, resume
from .test_sweep_runs import cell_ids

ROUNDS = 2
CHAOS_SECONDS = 15.0


def workers_of(process) -> list[int]:
    """The sweep's worker processes (its children), from /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == process.pid:
                        pids.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return pids


def chaos(sweep, rng) -> list[str]:
    """Random SIGSTOP / SIGCONT / SIGKILL of workers until the sweep ends or CHAOS_SECONDS pass; every paused
    worker is woken at the end. Returns what was done."""
    done, paused = [], set()
    deadline = time.monotonic() + CHAOS_SECONDS
    while sweep.poll() is None and time.monotonic() < deadline:
        time.sleep(rng.uniform(0.2, 2.0))
        pids = workers_of(sweep)
        if not pids:
            continue
        pid, action = rng.choice(pids), rng.choice(["stop", "stop", "cont", "kill"])
        if action == "stop":
            os.kill(pid, signal.SIGSTOP)
            paused.add(pid)
        elif action == "cont" and paused:
            pid = paused.pop()
            resume(pid)
        elif action == "kill":
            os.kill(pid, signal.SIGKILL)
            paused.discard(pid)
        done.append(f"{action} {pid}")
    for pid in paused:
        resume(pid)
    return done


def truthful(code, results, ids) -> None:
    finished = [db.run_state(results, r).result is not None for r in ids]
    if code == 0:
        assert all(finished)
    else:
        assert code == 3 and not all(finished), code


def test_rounds_of_random_pauses_and_kills_keep_every_cell_exactly_once(tmp_path, ablation_file):
    path = ablation_file(seeds=3, lrs=(1e-3, 3e-3), steps=30, checkpoint_every=5)
    ids = cell_ids(path)
    assert len(ids) == 12
    for round_ in range(ROUNDS):
        rng = random.Random(1000 + round_)
        results = tmp_path / f"round{round_}"
        sweep = start_sweep(path, results, "--workers", "3", *FAST)
        actions = chaos(sweep, rng)
        try:
            _, err = sweep.communicate(timeout=240)
        finally:
            if sweep.poll() is None:
                os.killpg(sweep.pid, signal.SIGKILL)
        for run_id in ids:
            assert raw_results(results, run_id) <= 1, (round_, run_id, actions)
        truthful(sweep.returncode, results, ids)
        again = start_sweep(path, results, "--workers", "2", *FAST)
        _, err = again.communicate(timeout=300)
        assert again.returncode == 0, (round_, actions, err)
        for run_id in ids:
            assert raw_results(results, run_id) == 1, (round_, run_id, actions)
            assert db.run_state(results, run_id).result == "completed"
        con = db.connect(results)
        steps = con.execute("SELECT run_id, count(*), count(DISTINCT step), max(step) FROM metrics "
                            "WHERE name = 'train_loss' GROUP BY run_id").fetchall()
        assert len(steps) == 12 and all(n == distinct == last == 30 for _, n, distinct, last in steps), (round_, steps)
