"""The MLflow export, read back with MLflow's own `MlflowClient` on the file store: one experiment per sweep, a
parent run per arm with each of its runs as a child, every series with its steps and values, config as params,
summary as tags; a re-export leaves one active MLflow run per harness run."""

import math

import pytest

from analysis.export import export_sweep
from planted_store import SWEEP

# What the export sets for itself: MLflow refuses a file store unless allowed, and phones home unless told not to.
pytestmark = pytest.mark.slow  # importing mlflow alone takes seconds

OFFLINE = {"MLFLOW_ALLOW_FILE_STORE": "true", "MLFLOW_DISABLE_TELEMETRY": "true"}


@pytest.fixture(scope="module")
def client(planted, tmp_path_factory):
    results, _ = planted
    out = tmp_path_factory.mktemp("mlflow")
    export_sweep(results, SWEEP, "mlflow", out)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in OFFLINE.items():
            patch.setenv(name, value)
        from mlflow.tracking import MlflowClient

        yield MlflowClient(tracking_uri=out.as_uri()), out


def runs_of(client, view=None):
    from mlflow.entities import ViewType

    experiment = client.get_experiment_by_name(SWEEP)
    return client.search_runs([experiment.experiment_id], run_view_type=view or ViewType.ACTIVE_ONLY, max_results=1000)


def children(client) -> dict:
    """The harness runs, by harness run id."""
    found = [run for run in runs_of(client) if run.data.tags.get("harness.kind") == "run"]
    assert len({run.data.tags["harness.run_id"] for run in found}) == len(found)
    return {run.data.tags["harness.run_id"]: run for run in found}


def test_each_arm_is_a_parent_run_holding_its_runs(client, planted):
    client, _ = client
    _, runs = planted
    parents = {run.info.run_id: run for run in runs_of(client) if run.data.tags.get("harness.kind") == "arm"}
    assert sorted(run.info.run_name for run in parents.values()) == ["base", "qk/norm"]
    found = children(client)
    assert set(found) == set(runs)  # sweep `other` stays out
    for run_id, planted_run in runs.items():
        assert parents[found[run_id].data.tags["mlflow.parentRunId"]].info.run_name == planted_run.arm
        assert found[run_id].info.run_name == run_id
        assert found[run_id].info.status == ("FAILED" if planted_run.status == "failed" else "FINISHED")


def test_every_series_holds_every_step_and_value(client, planted):
    client, _ = client
    _, runs = planted
    found = children(client)
    for run_id, planted_run in runs.items():
        expected = planted_run.series(separator=".")
        assert set(found[run_id].data.metrics) == set(expected), run_id
        for key, values in expected.items():
            history = {point.step: point.value for point in client.get_metric_history(found[run_id].info.run_id, key)}
            assert history.keys() == values.keys(), (run_id, key)
            assert all(history[s] == v or (math.isnan(v) and math.isnan(history[s])) for s, v in values.items()), key
    assert "attn_logit_max.layer_1.head_0" in expected and "attn_logit_max" in expected  # both kept, side by side


def test_config_is_params_and_summary_is_tags(client, planted):
    client, _ = client
    _, runs = planted
    found = children(client)
    for run_id, planted_run in runs.items():
        assert found[run_id].data.params == {key: str(value) for key, value in planted_run.exported_config().items()}
        tags = {key.removeprefix("harness."): value for key, value in found[run_id].data.tags.items()
                if key.startswith("harness.") and key != "harness.kind"}
        assert tags == {key: str(value) for key, value in planted_run.summary().items()}, run_id
    assert found["qk-1"].data.tags["harness.diverged_at_step"] == "6"


def test_a_re_export_replaces_each_run(client, planted):
    client, out = client
    from mlflow.entities import ViewType

    before = children(client)
    export_sweep(planted[0], SWEEP, "mlflow", out)
    after = children(client)
    assert set(after) == set(before)
    assert not {run.info.run_id for run in after.values()} & {run.info.run_id for run in before.values()}
    assert len(runs_of(client)) == len(after) + 2  # the two arms' parents are kept, not doubled
    deleted = {run.info.run_id for run in runs_of(client, ViewType.DELETED_ONLY)}
    assert deleted == {run.info.run_id for run in before.values()}  # MLflow's soft delete: `mlflow gc` purges
    run = after["base-0"]
    assert len(client.get_metric_history(run.info.run_id, "val_loss")) == 3  # not appended to the old history
