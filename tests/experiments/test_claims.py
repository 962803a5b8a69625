"""The claim protocol on its own: exclusive claims, heartbeats, release, takeover of stale or dead claims,
staleness on the observer's clock, and the minimum --stale-after."""

import json
import os
import subprocess
import sys
import time

import pytest

from experiments.workers.claims import BeatWatcher, Claim, Heartbeat, claim_dir, current_claim, try_claim


class Clock:
    """A monotonic clock the test moves by hand: the watcher's only notion of time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def claim(results, run_id="r", watcher=None, worker="w"):
    return try_claim(results, run_id, worker=worker, sweep="s", watcher=watcher or BeatWatcher(60.0))


def remote_claim(results, run_id="r"):
    """A claim held by a process on another host (its liveness cannot be checked by pid)."""
    folder = claim_dir(results, run_id)
    folder.mkdir(parents=True)
    (folder / "0").write_text(json.dumps({"host": "node-17", "pid": 1234, "worker": "far", "sweep": "s"}))
    holder = Claim(results, run_id, 0)
    holder.beat(step=5, steps=10)
    return holder


def test_a_held_claim_cannot_be_taken_and_a_released_one_can(tmp_path):
    first = claim(tmp_path, worker="a")
    assert first is not None and first.generation == 0
    assert claim(tmp_path, worker="b") is None
    first.beat(step=3, steps=10)
    info = current_claim(tmp_path, "r")
    assert (info.worker, info.step, info.steps, info.released) == ("a", 3, 10, False)
    assert first.release()
    second = claim(tmp_path, worker="b")
    assert second.generation == 1 and first.lost() and not second.lost()
    assert not first.release()  # a superseded generation is no one's to release
    assert not current_claim(tmp_path, "r").released


def test_a_claim_whose_local_process_died_is_free_at_once(tmp_path):
    code = ("import sys; from experiments.workers.claims import try_claim, BeatWatcher; "
            "try_claim(sys.argv[1], 'r', worker='dead', sweep='s', watcher=BeatWatcher(60.0))")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    assert current_claim(tmp_path, "r").holder_gone()
    assert claim(tmp_path).generation == 1


def test_a_remote_claim_is_stale_once_its_beat_stops_changing_for_stale_after(tmp_path):
    holder, clock = remote_claim(tmp_path), Clock()
    watcher = BeatWatcher(30.0, clock)
    assert claim(tmp_path, watcher=watcher) is None  # first sight: fresh
    clock.now += 29
    assert claim(tmp_path, watcher=watcher) is None
    holder.beat(step=6, steps=10)  # a beat resets the watch, from when this observer sees it
    clock.now += 29
    assert claim(tmp_path, watcher=watcher) is None
    clock.now += 29
    assert claim(tmp_path, watcher=watcher) is None
    clock.now += 1.5
    taken = claim(tmp_path, watcher=watcher)
    assert taken is not None and taken.generation == 1 and holder.lost()


@pytest.mark.parametrize("skew", [3600, -3600])
def test_clock_skew_of_beat_files_neither_frees_a_live_claim_nor_pins_a_dead_one(tmp_path, skew):
    """A beat file's mtime an hour in the future or the past (a node's skewed clock, NFS attribute caching)
    does not matter: only whether the beat changes, on the observer's clock."""
    holder, clock = remote_claim(tmp_path), Clock()
    beat = claim_dir(tmp_path, "r") / "0.beat"
    watcher = BeatWatcher(30.0, clock)

    def skewed():
        os.utime(beat, (time.time() + skew, time.time() + skew))

    skewed()
    assert claim(tmp_path, watcher=watcher) is None
    for _ in range(5):  # live: it beats every 10 s of our clock, each beat stamped an hour off
        clock.now += 10
        holder.beat(step=7, steps=10)
        skewed()
        assert claim(tmp_path, watcher=watcher) is None, "a live claim was freed by a skewed mtime"
    clock.now += 29  # dead: no beat any more, the mtime still says 'an hour from now' (or 'an hour ago')
    assert claim(tmp_path, watcher=watcher) is None
    clock.now += 2
    assert claim(tmp_path, watcher=watcher) is not None, "a dead claim was pinned by a skewed mtime"


def test_the_heartbeat_thread_beats_while_the_caller_is_busy_and_notices_a_lost_claim(tmp_path):
    held = claim(tmp_path)
    with Heartbeat(held, 0.05, steps=10) as heartbeat:
        before = current_claim(tmp_path, "r").beat
        while current_claim(tmp_path, "r").beat == before:  # slow steps holding the GIL in Python code, until a beat
            busy_until = time.monotonic() + 0.5
            while time.monotonic() < busy_until:
                sum(range(1000))
        assert current_claim(tmp_path, "r").beat != before
        os.link(claim_dir(tmp_path, "r") / "0", claim_dir(tmp_path, "r") / "1")  # someone takes it over
        while not heartbeat.lost:
            time.sleep(0.01)
    assert not json.loads((claim_dir(tmp_path, "r") / "0.beat").read_text())["released"]


@pytest.mark.slow
def test_racing_claimants_get_one_claim(tmp_path):
    code = ("import sys; from experiments.workers.claims import try_claim, BeatWatcher; "
            "print(try_claim(sys.argv[1], 'r', worker=sys.argv[2], sweep='s', watcher=BeatWatcher(60.0)) is not None)")
    racers = [subprocess.Popen([sys.executable, "-c", code + "; import time; time.sleep(2)", str(tmp_path), str(i)],
                               stdout=subprocess.PIPE, text=True) for i in range(6)]
    wins = [p.communicate()[0].strip() for p in racers]
    assert wins.count("True") == 1
