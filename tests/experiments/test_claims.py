"""The claim protocol on its own: exclusive claims, heartbeats, release, takeover of stale or dead claims."""

import json
import os
import subprocess
import sys
import time

from experiments.claims import claim_dir, current_claim, try_claim


def claim(results, run_id="r", stale_after=60.0, worker="w"):
    return try_claim(results, run_id, worker=worker, sweep="s", stale_after=stale_after)


def test_a_held_claim_cannot_be_taken_and_a_released_one_can(tmp_path):
    first = claim(tmp_path, worker="a")
    assert first is not None and first.generation == 0
    assert claim(tmp_path, worker="b") is None
    first.beat(step=3, steps=10)
    info = current_claim(tmp_path, "r")
    assert (info.worker, info.step, info.steps, info.released) == ("a", 3, 10, False)
    first.beat(released=True)
    second = claim(tmp_path, worker="b")
    assert second.generation == 1 and first.lost() and not second.lost()


def test_a_claim_whose_local_process_died_is_free_at_once(tmp_path):
    code = ("import sys; from experiments.claims import try_claim; "
            "try_claim(sys.argv[1], 'r', worker='dead', sweep='s', stale_after=60.0)")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    assert current_claim(tmp_path, "r").holder_gone()
    assert claim(tmp_path).generation == 1


def test_a_remote_claim_is_stale_only_after_its_heartbeat_timeout(tmp_path):
    folder = claim_dir(tmp_path, "r")
    folder.mkdir(parents=True)
    (folder / "0").write_text(json.dumps({"host": "node-17", "pid": 1234, "worker": "far", "sweep": "s"}))
    (folder / "0.beat").write_text(json.dumps({"step": 5, "steps": 10}))
    assert claim(tmp_path, stale_after=30.0) is None  # fresh heartbeat from another host: alive as far as we know
    old = time.time() - 31
    os.utime(folder / "0.beat", (old, old))
    taken = claim(tmp_path, stale_after=30.0)
    assert taken is not None and taken.generation == 1


def test_racing_claimants_get_one_claim(tmp_path):
    code = ("import sys; from experiments.claims import try_claim; "
            "print(try_claim(sys.argv[1], 'r', worker=sys.argv[2], sweep='s', stale_after=60.0) is not None)")
    racers = [subprocess.Popen([sys.executable, "-c", code + "; import time; time.sleep(2)", str(tmp_path), str(i)],
                               stdout=subprocess.PIPE, text=True) for i in range(6)]
    wins = [p.communicate()[0].strip() for p in racers]
    assert wins.count("True") == 1
