"""`harness calc` and `harness presets` run for real: through `main([...])`, and once as a subprocess."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from harness.presets import PRESETS

LLAMA_3_2_3B_CONFIG = Path(__file__).parents[1] / "fixtures" / "llama-3.2-3b-config.json"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def calc_json(capsys, *argv: str) -> dict:
    code, out, _ = run_cli(capsys, "calc", *argv, "--json")
    assert code == 0
    return json.loads(out)


def test_json_has_the_documented_keys_and_the_seeds_figures(capsys):
    report = calc_json(capsys, "--preset", "stack-100m")
    assert ({"params", "non_embedding_params", "per_layer_params", "flops_per_token", "kv_cache_bytes_per_token"}
            <= set(report))
    assert report["params"] == 99_372_288
    assert report["per_layer_params"] == [2_753_152] * 30
    assert report["kv_cache_bytes_per_token"] == 2 * 30 * 2 * 64 * 2


def test_table_shows_thousands_separators_and_one_per_layer_value(capsys):
    code, out, _ = run_cli(capsys, "calc", "--preset", "stack-100m")
    assert code == 0
    assert "99,372,288" in out and "2,753,152 (each of 30)" in out and "82,595,072" in out


def test_hf_config_of_llama_3_2_3b(capsys):
    report = calc_json(capsys, "--hf-config", str(LLAMA_3_2_3B_CONFIG))
    assert report["params"] == 3_212_749_824
    assert report["per_layer_params"] == [100_669_440] * 28


def test_set_changes_the_config_before_counting(capsys):
    tied = calc_json(capsys, "--preset", "tiny")
    untied = calc_json(capsys, "--preset", "tiny", "--set", "tie_embeddings=false", "--set", "d_model=128")
    assert untied["config"]["d_model"] == 128 and untied["config"]["head_dim"] == 32
    assert untied["params"] > tied["params"]


def test_seq_len_and_kv_dtype(capsys):
    short = calc_json(capsys, "--preset", "llama3", "--seq-len", "64", "--kv-dtype", "fp32")
    long = calc_json(capsys, "--preset", "llama3", "--seq-len", "128")
    assert long["flops_per_token"] - short["flops_per_token"] == 12 * 8 * 32 * 64 * 4  # 4 layers, 64 more keys
    assert short["kv_cache_bytes_per_token"] == 2 * long["kv_cache_bytes_per_token"]


@pytest.mark.parametrize("solve", ["d_ff", "d_model"])
def test_iso_params_reports_the_solved_field_and_residual(capsys, solve):
    report = calc_json(capsys, "--preset", "llama3", "--iso-params", "12e6", "--solve", solve)
    iso = report["iso_param"]
    assert iso["target"] == 12_000_000 and iso["residual"] == report["params"] - 12_000_000
    assert iso[solve] == report["config"][solve]
    assert abs(iso["residual"]) < 0.05 * 12_000_000


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--preset", "lama3"], "Did you mean 'llama3'"),
        (["--preset", "tiny", "--set", "d_modle=64"], "--set names no field 'd_modle'; did you mean 'd_model'?"),
        (["--preset", "tiny", "--set", "d_model=wide"], "d_model='wide' is invalid: expected an integer"),
        (["--preset", "tiny", "--set", "mlp=swigl"], "Did you mean 'swiglu'"),
        (["--preset", "tiny", "--set", "n_kv_heads=3"], "n_kv_heads=3"),
        (["--preset", "tiny", "--set", "n_heads=3"],
         "ModelConfig.n_heads=3 is invalid: it must be a multiple of n_kv_heads=2"),
        (["--preset", "tiny", "--set", "d_model"], "expected field=value"),
        (["--preset", "tiny", "--seq-len", "0"], "--seq-len='0' is invalid"),
        (["--preset", "tiny", "--iso-params", "lots"], "--iso-params='lots' is invalid"),
        (["--preset", "tiny", "--solve", "d_model"], "--solve d_model needs --iso-params N"),
        (["--preset", "tiny", "--iso-params", "10"],
         "--iso-params 10 is unreachable by solving d_ff: the smallest d_ff (1)"),
        (["--preset", "tiny", "--iso-params", "10", "--solve", "d_model"], "unreachable by solving d_model"),
        (["--hf-config", "no/such/config.json"], "cannot read it"),
    ],
)
def test_bad_input_is_one_line_on_stderr_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, "calc", *argv)
    assert code == 2 and out == ""
    assert err.startswith("harness calc: error:") and err.count("\n") == 1
    assert message in err


def test_unsupported_hf_config_is_refused(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "mamba"}))
    code, _, err = run_cli(capsys, "calc", "--hf-config", str(config))
    assert code == 2 and "mamba" in err


def test_presets_lists_every_preset_with_its_count(capsys):
    code, out, _ = run_cli(capsys, "presets")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert set(rows) == set(PRESETS)
    assert "99,372,288" in rows["stack-100m"] and "sandwich" in rows["gemma2"] and "8/2" in rows["llama3"]


def test_runs_as_a_process():
    done = subprocess.run(
        [sys.executable, "-m", "cli.main", "calc", "--preset", "tiny", "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["params"] == 164_160


@pytest.mark.parametrize("argv", [["calc", "--preset", "tiny", "--json"], ["presets"]])
def test_a_reader_that_leaves_early_is_not_an_error(argv):
    """`harness calc --json | head`: the pipe is closed before anything is written (its reader has gone)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    done = subprocess.run([sys.executable, "-m", "cli.main", *argv], stdout=write_end, stderr=subprocess.PIPE,
                          text=True)
    os.close(write_end)
    assert done.returncode == 0 and done.stderr == ""


def test_the_smallest_reachable_target_is_the_smallest_config(capsys):
    floor = calc_json(capsys, "--preset", "tiny", "--set", "d_ff=1")["params"]
    assert calc_json(capsys, "--preset", "tiny", "--iso-params", str(floor))["iso_param"] == {
        "solve": "d_ff", "d_ff": 1, "target": floor, "residual": 0,
    }
    code, _, err = run_cli(capsys, "calc", "--preset", "tiny", "--iso-params", str(floor - 1))
    assert code == 2 and f"already gives {floor:,} parameters" in err


def test_calc_and_presets_never_import_torch():
    code = (
        "import sys; from cli.main import main; "
        "assert main(['calc', '--preset', 'tiny']) == 0 and main(['presets']) == 0; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True)
