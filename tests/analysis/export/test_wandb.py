"""The W&B export, read back with W&B's own reader of its transaction log (`wandb leet inspect --json`, which
prints each record of a run's `.wandb` file): every run as an offline run of the sweep's project, grouped by arm,
every series with its steps and values, its config and summary; a re-export replaces each run's offline directory."""

import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from analysis.export import export_sweep
from analysis.export import wandb as to_wandb
from planted_store import SWEEP

SLOW = pytest.mark.slow  # W&B's service starts, each run is a wandb.init, reading is a CLI per run
OFFLINE = {**os.environ, "WANDB_MODE": "offline", "WANDB_ERROR_REPORTING": "false"}


def records(path) -> list[dict]:
    """Every record of one `.wandb` file, as wandb's own reader prints them."""
    printed = subprocess.run([sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(path)],
                             capture_output=True, text=True, check=True, env=OFFLINE).stdout
    return [json.loads(line) for line in printed.splitlines()]


def read_run(path) -> dict:
    """The run's identity, config, history by key, summary and exit code."""
    run = {"history": {}, "summary": {}}
    for record in records(path):
        kind = record["type"]
        if kind == "run":
            body = record["run"]
            run.update(project=body["project"], group=body["run_group"], name=body["display_name"],
                       id=body["run_id"], config={k: v for k, v in body["config"]["update"].items() if k != "_wandb"})
        elif kind == "history":
            step = record["history"]["step"].get("num", 0)
            for key, value in record["history"]["item"].items():
                if not key.startswith("_"):
                    run["history"].setdefault(key, {})[step] = float(value)  # non-finite ones print as "NaN"
        elif kind == "summary":
            run["summary"].update(record["summary"].get("update", {}))
        elif kind == "exit":
            run["exit_code"] = record["exit"].get("exit_code", 0)
    return run


def read_all(out) -> dict[str, dict]:
    """Every exported run, by its name (the harness run id)."""
    files = sorted((out / "wandb").glob("offline-run-*/run-*.wandb"))
    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(read_run, files))
    assert len({run["name"] for run in runs}) == len(runs)
    return {run["name"]: run for run in runs}


@pytest.fixture(scope="module")
def exported(planted, tmp_path_factory):
    results, runs = planted
    out = tmp_path_factory.mktemp("wandb")
    export_sweep(results, SWEEP, "wandb", out)
    return out, runs, read_all(out)


@SLOW
def test_every_run_is_an_offline_run_of_the_sweep_grouped_by_arm(exported):
    _, runs, found = exported
    assert set(found) == set(runs)  # sweep `other` stays out
    for run_id, planted in runs.items():
        assert (found[run_id]["project"], found[run_id]["group"]) == (SWEEP, planted.arm)
        assert found[run_id]["exit_code"] == (1 if planted.status == "failed" else 0)
    assert len({run["id"] for run in found.values()}) == len(runs)


@SLOW
def test_every_series_holds_every_step_and_value(exported):
    _, runs, found = exported
    for run_id, planted in runs.items():
        history = found[run_id]["history"]
        assert set(history) == set(planted.series()), run_id
        for key, values in planted.series().items():
            assert history[key].keys() == values.keys(), (run_id, key)
            assert all(history[key][s] == v or (math.isnan(v) and math.isnan(history[key][s]))
                       for s, v in values.items()), (run_id, key)
    assert math.isnan(found["qk-1"]["history"]["train_loss"][6])


@SLOW
def test_config_and_summary(exported):
    _, runs, found = exported
    for run_id, planted in runs.items():
        assert found[run_id]["config"] == planted.exported_config(), run_id
        assert found[run_id]["summary"]["harness"] == planted.summary(), run_id
    assert found["qk-1"]["summary"]["harness"]["diverged_at_step"] == 6


@SLOW
def test_a_re_export_replaces_each_offline_run(exported, planted):
    out, runs, before = exported
    logs = sorted(path.name for path in (out / "wandb").glob("offline-run-*/run-*.wandb"))  # run-<W&B id>.wandb
    export_sweep(planted[0], SWEEP, "wandb", out)
    assert sorted(path.name for path in (out / "wandb").glob("offline-run-*/run-*.wandb")) == logs
    assert len(list((out / "wandb").glob("offline-run-*"))) == len(runs)
    again = read_run(next((out / "wandb").glob(f"offline-run-*/run-{before['qk-1']['id']}.wandb")))
    assert again["name"] == "qk-1" and again["history"].keys() == before["qk-1"]["history"].keys()
    assert again["history"]["val_loss"] == before["qk-1"]["history"]["val_loss"]


def test_names_w_and_b_accepts():
    assert to_wandb.project_name("lr:sweep/2#a") == "lr-sweep-2-a" and len(to_wandb.project_name("s" * 200)) == 128
    assert to_wandb.run_id("exp", "base-0") == to_wandb.run_id("exp", "base-0") != to_wandb.run_id("other", "base-0")
