"""The SLURM backend against a real one-node SLURM (slurm_cluster.py; installed and started here, never
skipped): every cell exactly once, a worker preempted mid-cell requeues itself and its cell resumes from its
checkpoint, a failed cell's SLURM log is shown, and bad input is one line before anything is submitted."""

import json
import os
import re
import signal
import subprocess

import pytest

import db
from errors import ConfigError
from experiments import Layout, SlurmLauncher, SlurmResources, expand
from experiments.backends.devices import parse_devices, visible_gpus, worker_slots
from experiments.backends.slurm.logs import slurm_log, worker_name
from experiments.backends.slurm.resources import parse_time
from experiments.declare.load import load_ablation
from harness.train.checkpoints import last_checkpoint

from .conftest import finished_segments, sweep_command, wait_for
from .slurm_cluster import PARTITION, SlurmCluster


@pytest.fixture(scope="module")
def slurm():
    cluster = SlurmCluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()  # also after a failed start: the daemons that did start, and the temp dir


def cell_ids(path):
    return [c.run_id for c in expand(load_ablation(str(path))[0], overrides={"vocab_size": 512}).cells]


def harness_sweep(slurm, path, results, *extra):
    done = subprocess.run(sweep_command(path, results, "--backend", "slurm", *extra), env=slurm.env,
                          capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow  # a real SLURM (the module's fixture)
def test_a_sweep_on_slurm_trains_every_cell_exactly_once(slurm, tmp_path, ablation_file):
    path = ablation_file(seeds=2, steps=6)
    ids, results = cell_ids(path), tmp_path / "results"
    code, out, err = harness_sweep(slurm, path, results, "--workers", "2", "--wait", "--no-progress")
    assert code == 0, err + slurm.log_tail()
    jobs = out.splitlines()[0].split()  # then the closing lines (results, report, query)
    assert len(jobs) == 2 and all(re.fullmatch(r"\d+_[01]", j) for j in jobs)  # one array, two elements
    for run_id in ids:
        assert finished_segments(results, run_id) == ["completed"], run_id
        assert len(db.run_state(results, run_id).segments) == 1
    con = db.connect(results)
    assert (sorted(r for (r,) in con.execute("SELECT run_id FROM sweep_cells WHERE sweep = 't'").fetchall())
            == sorted(ids))
    from experiments.workers.claims import current_claim

    workers = {current_claim(results, r).worker for r in ids}
    assert workers <= {worker_name(j, 0) for j in jobs} and all(slurm_log(results, w).exists() for w in workers)

    code, out, err = harness_sweep(slurm, path, results, "--workers", "2")
    assert code == 0 and "every cell is finished; nothing submitted" in err and out == ""


@pytest.mark.slow
def test_preempted_workers_requeue_and_their_cells_resume_from_their_checkpoints(slurm, tmp_path, ablation_file):
    # one array element running two workers (SLURM tasks), as K workers share a GPU; both are mid-cell
    path = ablation_file(name="p", steps=200, checkpoint_every=20)
    ids, results = cell_ids(path), tmp_path / "results"
    code, out, err = harness_sweep(slurm, path, results, "--workers", "2", "--workers-per-device", "2")
    assert code == 0, err
    (job,) = out.splitlines()[0].split()
    wait_for(lambda: all(last_checkpoint(results, r) is not None for r in ids))  # past a checkpoint
    slurm.run("scancel", "--signal=USR2", job)  # what SLURM sends before a time limit; submitit's preemption signal
    wait_for(lambda: all(db.run_state(results, r).result for r in ids) and job not in slurm.queue())

    con = db.connect(results)
    for run_id in ids:
        assert list(db.run_state(results, run_id).statuses.values()) == ["interrupted", "completed"]  # once each
        (start,) = con.execute("SELECT max(start_step) FROM _manifests WHERE run_id = ?", [run_id]).fetchone()
        assert 20 < start < 200  # resumed after the stop checkpoint, not from step 0 nor the periodic one
        steps = [s for (s,) in con.execute("SELECT step FROM metrics WHERE run_id = ? AND name = 'train_loss' "
                                           "ORDER BY step", [run_id]).fetchall()]
        assert steps == list(range(1, 201))  # no gap, no duplicate step
    assert "Restarts=1" in slurm.run("scontrol", "show", "job", job).stdout  # SLURM requeued the same job, once
    first, second = (slurm_log(results, worker_name(job, task)).read_text() for task in (0, 1))
    assert "Requeued job" in first and "Requeued job" not in second  # task 0 requeued the element for both
    assert first.count("Starting with JobEnvironment") == second.count("Starting with JobEnvironment") == 2


@pytest.mark.slow
def test_a_dead_tasks_cell_is_taken_over_by_another_element_from_its_checkpoint(slurm, tmp_path, ablation_file):
    from experiments.workers.claims import current_claim

    path = ablation_file(name="d", steps=60, checkpoint_every=10)
    ids, results = cell_ids(path), tmp_path / "results"
    code, out, err = harness_sweep(slurm, path, results, "--workers", "2")
    assert code == 0, err
    wait_for(lambda: last_checkpoint(results, ids[0]) is not None, every=0.05)  # mid-cell
    victim = current_claim(results, ids[0])
    os.kill(victim.pid, signal.SIGKILL)  # the task itself (its worker runs in it): no checkpoint, no release
    wait_for(lambda: all(db.run_state(results, r).result for r in ids) and not slurm.queue())

    assert all(finished_segments(results, r) == ["completed"] for r in ids)  # once each
    assert current_claim(results, ids[0]).worker not in ("", victim.worker)  # the other element finished it
    con = db.connect(results)
    (start,) = con.execute("SELECT max(start_step) FROM _manifests WHERE run_id = ?", [ids[0]]).fetchone()
    assert start > 10 and (start - 1) % 10 == 0  # resumed after its last periodic checkpoint, not from step 0
    steps = [s for (s,) in con.execute("SELECT step FROM metrics WHERE run_id = ? AND name = 'train_loss' "
                                       "ORDER BY step", [ids[0]]).fetchall()]
    assert steps == list(range(1, 61))


@pytest.mark.slow
def test_status_shows_the_slurm_log_of_a_failed_cell(slurm, tmp_path, ablation_file, capsys):
    path = ablation_file(name="f")
    results = tmp_path / "results"
    # device=cuda passes expansion (torch-free) and fails in the worker on this CPU-only machine
    code, out, err = harness_sweep(slurm, path, results, "--set", "device=cuda", "--retries", "0", "--wait",
                                   "--no-progress")
    assert code == 1, err
    (job,) = out.splitlines()[0].split()
    from cli.main import main

    assert main(["sweep", str(path), "--results", str(results), "--set", "vocab_size=512", "--set", "device=cuda",
                 "--retries", "0", "--status"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "failed: cell" in line]
    log = slurm_log(results, worker_name(job, 0))
    assert len(lines) == 2 and all(line.endswith(f"log {log}") for line in lines)
    assert "no CUDA device is visible" in log.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("extra, message", [
    (["--backend", "slurm", "--partition", "gpu-nope"],
     "--partition gpu-nope: SLURM says 'Partition gpu-nope not found'; partitions here: debug."),
    (["--backend", "slurm", "--time", "90x"], "--time '90x' is invalid"),
    (["--backend", "slurm", "--mem", "lots"], "--mem 'lots' is invalid"),
    (["--backend", "slurm", "--devices", "cpu"], "--devices is for --backend local"),
    (["--backend", "slurm", "--sbatch", "no-such-option=1"], "sbatch refused the job: sbatch: unrecognized option"),
    (["--backend", "slurm", "--gpus-per-element", "1", "--gpu-type", "a100"],
     "sbatch refused the job: sbatch: error: Invalid generic resource (gres) specification"),
    (["--partition", PARTITION], "--partition needs --backend slurm."),
    (["--wait"], "--wait needs --backend slurm."),
])
def test_bad_slurm_input_is_one_line_and_exit_2_before_anything_is_written(slurm, tmp_path, ablation_file, capsys,
                                                                          monkeypatch, extra, message):
    from cli.main import main

    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    results = tmp_path / "results"
    code = main(["sweep", str(ablation_file()), "--results", str(results), "--no-report", *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("harness sweep: error:") and message in err and err.count("\n") == 1, err
    assert not (results / "sweeps").exists() and not (results / "slurm").exists()


def test_without_sbatch_the_slurm_backend_is_refused_before_anything_is_written(tmp_path, ablation_file, capsys,
                                                                               monkeypatch):
    from cli.main import main

    monkeypatch.setenv("PATH", str(tmp_path / "no-slurm-here"))
    results = tmp_path / "results"
    code = main(["sweep", str(ablation_file()), "--results", str(results), "--no-report", "--backend", "slurm"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--backend slurm needs SLURM's sbatch on PATH; it is not there" in err
    assert not (results / "sweeps").exists()


@pytest.mark.slow
def test_a_request_sbatch_refuses_is_one_line_and_exit_2_and_leaves_the_store_as_it_was(slurm, tmp_path, ablation_file,
                                                                                       capsys, monkeypatch):
    """A refused submission under a sweep name that has a plan (which --replace would replace) changes no file
    of the store and leaves nothing in slurm/: sbatch is asked first (`--test-only`)."""
    from cli.main import main

    from .test_sweep_identity import digest

    monkeypatch.setenv("SLURM_CONF", str(slurm.conf))
    path, results = ablation_file(), tmp_path / "results"
    launch = ["sweep", str(path), "--results", str(results), "--no-report", "--set", "vocab_size=512"]
    assert main([*launch, "--dry-run"]) == 0  # writes nothing: the store is created by the planned launch below
    assert main([*launch, "--steps", "2", "--no-progress"]) == 0
    before = digest(results)
    capsys.readouterr()
    code = main([*launch, "--replace", "--backend", "slurm", "--mem", "900G"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("harness sweep: error: sbatch refused the job: "), err
    assert "Requested node configuration is not available" in err[0]
    assert digest(results) == before and not (results / "slurm").exists()


@pytest.mark.parametrize("value, minutes", [("5", 5), (90, 90), ("10:30", 11), ("1:00:00", 60), ("2-0", 2880),
                                            ("1-12:30", 2190), ("1-0:0:30", 1441)])
def test_time_limits_in_slurm_formats(value, minutes):
    assert parse_time(value) == minutes


@pytest.mark.parametrize("value", ["0:30", "1h", "-5", ""])
def test_bad_time_limits(value):
    with pytest.raises(ConfigError, match="--time"):
        parse_time(value)


def test_placement_follows_the_visible_gpus_like_the_local_backend(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")  # what SLURM sets for an element holding GPUs 3 and 5
    assert visible_gpus() == ["3", "5"] and parse_devices("auto") == ["3", "5"] and parse_devices("cuda:1") == ["5"]
    assert worker_slots(visible_gpus(), None, 4) == ["3"] * 4 + ["5"] * 4  # task i of the element takes slot i
    with pytest.raises(ConfigError, match="cuda:2 is not visible here"):
        parse_devices("cuda:2")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert parse_devices("auto") == ["cpu"]


@pytest.mark.slow
def test_an_element_runs_k_workers_per_gpu_as_slurm_tasks(slurm, tmp_path):
    launcher = SlurmLauncher(tmp_path, "s", layout=Layout(workers=24, workers_per_device=4),
                             resources=SlurmResources(gpus_per_element=2, mem="32G", time="4:00:00"))
    parameters = launcher.executor().parameters
    assert (parameters["ntasks_per_node"], parameters["gpus_per_node"], parameters["time"], parameters["mem"]) == \
        (8, 2, 240, "32G")
    assert launcher.elements == 3 and SlurmLauncher(tmp_path, "s").workers_per_element == 1


@pytest.mark.slow
def test_a_task_paused_past_stale_after_loses_its_cell_and_goes_on_with_the_next(slurm, tmp_path, ablation_file):
    from .stalls import FAST, assert_final_checkpoint_stands, raw_results, stall_until_taken_over

    path = ablation_file(name="s", seeds=2, steps=60, checkpoint_every=10)
    ids, results = cell_ids(path), tmp_path / "results"
    code, out, err = harness_sweep(slurm, path, results, "--workers", "2", *FAST)
    assert code == 0, err
    wait_for(lambda: last_checkpoint(results, ids[0]) is not None, every=0.02)  # mid-cell
    from experiments.workers.claims import current_claim

    victim = current_claim(results, ids[0])
    stall_until_taken_over(results, ids[0], victim.pid)  # the task's own process: its worker runs in it
    wait_for(lambda: all(db.run_state(results, r).result for r in ids) and not slurm.queue())

    for run_id in ids:
        assert raw_results(results, run_id) == 1 and db.run_state(results, run_id).result == "completed", run_id
        assert_final_checkpoint_stands(results, run_id)
    log = slurm_log(results, victim.worker).read_text()
    lost_at = log.index("lost the cell to another worker")
    assert "no cell left" in log[lost_at:]  # the task went on with the claim loop and ended cleanly
    assert "Traceback" not in log[lost_at:]


@pytest.mark.slow
def test_multi_device_cells_run_on_slurm_and_the_array_closes_the_sweep_by_itself(slurm, tmp_path, ablation_file):
    """One element running one worker of two processes (--devices-per-cell 2, gloo on the node's CPUs), prepared by a
    --setup line, with an sbatch option passed through and the interpreter named; no --wait: the array itself keeps
    and finishes the report and compacts the store once, which a later --follow finds done."""
    import sys

    path = ablation_file(name="m", steps=6)
    ids, results = cell_ids(path), tmp_path / "results"
    launch = [sys.executable, "-m", "cli.main", "sweep", str(path), "--results", str(results), "--set",
              "vocab_size=512", "--backend", "slurm"]
    done = subprocess.run([*launch, "--devices-per-cell", "2", "--cpus-per-worker", "1", "--python", sys.executable,
                           "--setup", "echo setup ran on $(hostname)", "--sbatch", "comment=harness-test"],
                          env=slurm.env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (job,) = done.stdout.split()
    assert "Comment=harness-test" in slurm.run("scontrol", "show", "job", job).stdout
    closed = results / "sweeps" / "m" / "logs" / "closed.json"
    wait_for(lambda: closed.exists() and job not in slurm.queue())

    for run_id in ids:
        assert finished_segments(results, run_id) == ["completed"] and len(db.run_state(results, run_id).segments) == 1
    log = slurm_log(results, worker_name(job, 0)).read_text()
    assert "setup ran on" in log and "closing the sweep: closed" in log and "ended with" not in log
    assert json.loads(closed.read_text())["by"] == worker_name(job, 0)
    assert (results / "index" / "shards.parquet").exists()  # compacted: the catalog index is written last
    last_page = (results / "sweeps" / "m" / "logs" / "report.log").read_text().splitlines()[-1]
    assert f"report: {len(ids)} of {len(ids)} cells in " in last_page  # the finished page, drawn on the node

    before = closed.read_text()
    follow = subprocess.run([*launch, "--follow", "--no-progress"], env=slurm.env, capture_output=True, text=True)
    assert follow.returncode == 0, follow.stderr
    assert "report  " in follow.stdout and closed.read_text() == before  # closed once, by the array
