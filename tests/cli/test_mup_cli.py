"""μP's bad input on the command line: one line naming the field and the fix, exit 2, nothing written."""

import pytest

from cli.main import main


@pytest.mark.parametrize("settings, message", [
    (["parametrization=mup"], "ModelConfig.parametrization='mup' is invalid: scales with d_model / mup_base_width: "
                              "set mup_base_width"),
    (["mup_base_width=64"], "ModelConfig.mup_base_width=64 is invalid: only applies with parametrization='mup'"),
    (["parametrization=mup", "mup_base_width=0"], "ModelConfig.mup_base_width=0 is invalid: must be an integer ≥ 1"),
    (["parametrization=mup", "mup_base_width=6.5"], "ModelConfig.mup_base_width='6.5' is invalid: expected an integer"),
    (["parametrization=mUP", "mup_base_width=64"], "Did you mean 'mup'?"),
])
@pytest.mark.parametrize("command", [["run", "--preset", "tiny", "--no-progress"], ["sweep", "tied_embeddings"]])
def test_bad_mup_settings_fail_in_one_line_before_anything_runs(command, settings, message, tmp_path, capsys):
    results = tmp_path / "results"
    args = [*command, "--results", str(results)]
    for setting in settings:
        args += ["--set", setting]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and err.startswith(f"harness {command[0]}: error:")
    assert not results.exists()
