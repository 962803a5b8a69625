"""Chaos: rounds of a 12-cell sweep whose workers are paused, woken and killed at random moments (seeded), whose
launcher is killed while it closes the finished sweep, and which two launchers run at once. After every launch
no cell has two results, no output holds a traceback, the exit code agrees with the store, and the same
command then finishes every cell left and the closing left undone, so none is lost."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest

import db
from db.compact import compact

from .conftest import processes_mentioning, start_sweep, wait_for
from .stalls import FAST, raw_results, resume
from .test_sweep_runs import cell_ids

CHAOS_SECONDS = 15.0
CLOSE_CLAIMS = "claims/sweep-close.t"


def workers_of(*launchers) -> list[int]:
    """The sweeps' worker processes (the launchers' children), from /proc."""
    parents, pids = {launcher.pid for launcher in launchers}, []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) in parents:
                        pids.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass
    return pids


class Chaos:
    """Random SIGSTOP / SIGCONT / SIGKILL of the launchers' workers, one every 0.2-2 s (seeded), for CHAOS_SECONDS:
    `act()` is called from a polling loop (it acts only when an action is due), and every paused worker is woken
    when the time is up or at `end()`. `done` says what was done."""

    def __init__(self, launchers, rng) -> None:
        self.launchers, self.rng, self.done, self.paused = launchers, rng, [], set()
        now = time.monotonic()
        self.deadline, self.due = now + CHAOS_SECONDS, now + rng.uniform(0.2, 2.0)

    def act(self) -> None:
        now = time.monotonic()
        if now >= self.deadline:
            self.end()
            return
        if now < self.due:
            return
        self.due = now + self.rng.uniform(0.2, 2.0)
        pids = workers_of(*self.launchers)
        if not pids:
            return
        pid, action = self.rng.choice(pids), self.rng.choice(["stop", "stop", "cont", "kill"])
        if action == "stop":
            os.kill(pid, signal.SIGSTOP)
            self.paused.add(pid)
        elif action == "cont" and self.paused:
            pid = self.paused.pop()
            resume(pid)
        elif action == "kill":
            os.kill(pid, signal.SIGKILL)
            self.paused.discard(pid)
        self.done.append(f"{action} {pid}")

    def end(self) -> None:
        """No more actions; every paused worker woken."""
        self.deadline = 0.0
        for pid in self.paused:
            resume(pid)
        self.paused.clear()


def chaos(launchers, rng) -> list[str]:
    """Chaos until the launches end or CHAOS_SECONDS pass, every paused worker woken at the end: what was done."""
    agent = Chaos(launchers, rng)
    while any(launcher.poll() is None for launcher in launchers) and agent.deadline > time.monotonic():
        agent.act()
        time.sleep(0.01)
    agent.end()
    return agent.done


def close_claims(results) -> int:
    folder = results / CLOSE_CLAIMS
    return sum(1 for name in os.listdir(folder) if name.isdigit()) if folder.is_dir() else 0


def killed_while_closing(launcher, results, chaos: Chaos) -> bool:
    """Wait for the launch to end, `chaos` acting meanwhile; the moment it claims the closing, stop it, check that
    the closing is not done yet, and kill it (the launcher alone: its report process sees its input end). Whether
    it was killed. The chaos runs in the same loop, so a launch that finishes its cells within the chaos is caught
    closing all the same, however fast the machine."""
    before, marker = close_claims(results), results / "sweeps" / "t" / "logs" / "closed.json"
    try:
        while launcher.poll() is None:
            if close_claims(results) > before:
                launcher.send_signal(signal.SIGSTOP)
                assert not marker.exists()  # mid-closing: claimed, the closing not recorded
                launcher.send_signal(signal.SIGKILL)
                launcher.wait()
                return True
            chaos.act()
            time.sleep(0.001)
        return False
    finally:
        chaos.end()


def ended(launcher, results) -> tuple[int, str]:
    """Its exit code and stderr, once it and every process it started (workers, report) are gone."""
    _, err = launcher.communicate()
    wait_for(lambda: not processes_mentioning(str(results)))
    return launcher.returncode, err


def no_traceback(results, *errs) -> None:
    logs = [p.read_text() for p in (results / "sweeps" / "t" / "logs").glob("*.log")]
    for text in (*errs, *logs):
        assert "Traceback" not in text, text


def truthful(code, results, ids) -> None:
    """0 only when every cell has a result (final, so still true now); otherwise 3, cells left: never 1 (no cell
    failed) nor anything else."""
    assert code in (0, 3), code
    if code == 0:
        assert all(db.run_state(results, r).result is not None for r in ids)


def exactly_once(results, ids, actions) -> None:
    """Every cell one result ever recorded, `completed`, each step once; the store closed: nothing to compact."""
    for run_id in ids:
        assert raw_results(results, run_id) == 1, (run_id, actions)
        assert db.run_state(results, run_id).result == "completed"
    con = db.connect(results)
    steps = con.execute("SELECT run_id, count(*), count(DISTINCT step), max(step) FROM metrics "
                        "WHERE name = 'train_loss' GROUP BY run_id").fetchall()
    assert len(steps) == 12 and all(n == distinct == last == 30 for _, n, distinct, last in steps), steps
    assert (results / "sweeps" / "t" / "logs" / "closed.json").exists() and compact(results) == 0


def with_report(path, results, *extra) -> subprocess.Popen:
    """`harness sweep` with its live report process (start_sweep turns it off)."""
    command = [sys.executable, "-m", "cli.main", "sweep", str(path), "--results", str(results), "--set",
               "vocab_size=512", *extra]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


@pytest.fixture
def chaos_ablation(ablation_file):
    path = ablation_file(seeds=3, lrs=(1e-3, 3e-3), steps=30, checkpoint_every=5)
    ids = cell_ids(path)
    assert len(ids) == 12
    return path, ids


@pytest.mark.slow
def test_random_pauses_and_kills_and_a_launcher_killed_while_closing(tmp_path, chaos_ablation):
    path, ids = chaos_ablation
    results, errs = tmp_path / "results", []
    launcher = with_report(path, results, "--workers", "3", *FAST)
    agent = Chaos([launcher], random.Random(1000))  # the first launch only
    for _ in range(3):  # until a launch is killed while it closes (chaos may leave cells for the next one)
        if killed_while_closing(launcher, results, agent):
            break
        code, err = ended(launcher, results)
        errs.append(err)
        truthful(code, results, ids)
        launcher = with_report(path, results, "--workers", "2", *FAST)
    else:
        pytest.fail(f"no launch reached its closing: {agent.done}")
    actions = agent.done
    wait_for(lambda: not processes_mentioning(str(results)))  # its report process ended by itself
    again = with_report(path, results, "--workers", "2", *FAST)
    code, err = ended(again, results)
    assert code == 0, err
    no_traceback(results, err, *errs)
    exactly_once(results, ids, actions)


@pytest.mark.slow
def test_random_pauses_and_kills_under_two_launchers_at_once(tmp_path, chaos_ablation):
    path, ids = chaos_ablation
    results = tmp_path / "results"
    launchers = [start_sweep(path, results, "--workers", "2", *FAST) for _ in range(2)]
    actions = chaos(launchers, random.Random(2000))
    outcomes = [ended(launcher, results) for launcher in launchers]
    for code, _ in outcomes:
        truthful(code, results, ids)
    for run_id in ids:
        assert raw_results(results, run_id) <= 1, (run_id, actions)
    again = start_sweep(path, results, "--workers", "2", *FAST)
    code, err = ended(again, results)
    assert code == 0, err
    no_traceback(results, err, *(err for _, err in outcomes))
    exactly_once(results, ids, actions)
