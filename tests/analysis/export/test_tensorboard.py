"""The TensorBoard export, read back with TensorBoard's own EventAccumulator: every run in its arm's directory,
every series with its steps and values (as 32-bit floats, as TensorBoard keeps scalars), config and summary as
hparams; a re-export leaves one event file per run."""

import math

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator
from tensorboard.plugins.hparams import plugin_data_pb2

from analysis.export import export_sweep
from analysis.export.tensorboard import path_part
from planted_store import SWEEP


def read_run(directory):
    """(tag → {step: value}, hparams) of one run directory, through TensorBoard's reader."""
    accumulator = event_accumulator.EventAccumulator(str(directory), size_guidance={event_accumulator.SCALARS: 0})
    accumulator.Reload()
    series = {tag: {event.step: event.value for event in accumulator.Scalars(tag)}
              for tag in accumulator.Tags()["scalars"]}
    content = accumulator.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    start = plugin_data_pb2.HParamsPluginData.FromString(content).session_start_info
    hparams = {key: getattr(value, value.WhichOneof("kind")) for key, value in start.hparams.items()}
    return series, hparams


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.fixture(scope="module")
def exported(planted, tmp_path_factory):
    results, runs = planted
    out = tmp_path_factory.mktemp("tb")
    export_sweep(results, SWEEP, "tensorboard", out)
    return out, runs


def test_every_run_sits_in_its_arms_directory(exported):
    out, runs = exported
    found = {(arm.name, run.name) for arm in (out / SWEEP).iterdir() for run in arm.iterdir()}
    assert found == {(planted.arm.replace("/", "%2F"), run_id) for run_id, planted in runs.items()}
    assert [path.name for path in out.iterdir()] == [SWEEP]  # sweep `other` stays out


def test_every_series_holds_every_step_and_value(exported):
    out, runs = exported
    for run_id, planted in runs.items():
        series, _ = read_run(out / SWEEP / planted.arm.replace("/", "%2F") / run_id)
        expected = planted.series()
        assert set(series) == set(expected), run_id
        for tag, values in expected.items():
            assert list(series[tag]) == sorted(values), (run_id, tag)
            assert all(same(series[tag][step], float(np.float32(value))) for step, value in values.items()), tag
    assert "attn_logit_max/layer_1/head_0" in series and "param_rms/layer_1" in series
    assert math.isnan(read_run(out / SWEEP / "qk%2Fnorm" / "qk-1")[0]["train_loss"][6])  # the divergence


def test_config_and_summary_are_the_runs_hparams(exported):
    out, runs = exported
    for run_id, planted in runs.items():
        _, hparams = read_run(out / SWEEP / planted.arm.replace("/", "%2F") / run_id)
        summary = {f"harness.{key}": value for key, value in planted.summary().items()}
        assert hparams == {**planted.exported_config(), **summary}, run_id
    assert runs["qk-1"].summary()["diverged_at_step"] == 6 and "attn_softcap" not in hparams  # NULLs left out


def test_a_re_export_replaces_each_runs_event_file(exported, planted):
    out, runs = exported
    export_sweep(planted[0], SWEEP, "tensorboard", out)
    for run_id, planted_run in runs.items():
        directory = out / SWEEP / planted_run.arm.replace("/", "%2F") / run_id
        assert len(list(directory.glob("events.out.tfevents.*"))) == 1
        series, _ = read_run(directory)
        assert {tag: list(values) for tag, values in series.items()} == \
               {tag: sorted(values) for tag, values in planted_run.series().items()}  # each step once


def test_any_name_is_one_directory_name():
    assert [path_part(name) for name in ("qk/norm", "..", ".", "lr=1e-3 (rope)")] == \
        ["qk%2Fnorm", "%2E%2E", "%2E", "lr=1e-3 (rope)"]
