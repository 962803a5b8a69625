import sys
from pathlib import Path

import pytest

from cli.main import main

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    path = tmp_path_factory.mktemp("plot") / "results"
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.002, 2), "rmsnorm": (-0.1, 0.002, 2)}, lrs=(1e-3, 1e-2),
                            steps=12)
    return path


@pytest.mark.parametrize("suffix, magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_writes_the_figure_in_the_suffixs_format(results, tmp_path, capsys, suffix, magic):
    out = tmp_path / "fig" / f"lr{suffix}"
    assert main(["plot", "lr", "qk", "--results", str(results), "--out", str(out)]) == 0
    assert out.read_bytes().startswith(magic) and capsys.readouterr().out.strip() == str(out)


def test_curves_take_ema_and_log_axes(results, tmp_path):
    out = tmp_path / "curves.png"
    assert main(["plot", "curves", "qk", "--results", str(results), "--out", str(out), "--ema", "0.9", "--log"]) == 0
    assert out.stat().st_size > 10_000


@pytest.mark.parametrize("args, message", [
    (["plot", "curvs", "qk", "--out", "x.png"], "unknown figure 'curvs'; did you mean 'curves'?"),
    (["plot", "lr", "qk", "--out", "x.jpg"],
     "--out 'x.jpg' must end in .png, .svg, .pdf (the format follows the suffix)."),
    (["plot", "curves", "qk", "--out", "x.png", "--ema", "1.5"],
     "--ema 1.5 is invalid: the weight of the past must be at least 0 (none) and below 1."),
    (["plot", "lr", "kq", "--out", "x.png"], "no sweep named 'kq' in the results store; did you mean 'qk'?"),
])
def test_bad_input_is_one_line_and_exit_2(results, capsys, args, message):
    assert main([*args, "--results", str(results)]) == 2
    assert capsys.readouterr().err.strip() == f"harness plot: error: {message}"


def test_out_under_a_file_is_one_line_and_exit_2_before_the_store_is_read(tmp_path, capsys):
    (tmp_path / "figures").write_text("a file, not a folder")
    out = tmp_path / "figures" / "lr.png"
    assert main(["plot", "lr", "no-such-sweep", "--results", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (f"harness plot: error: --out {str(out)!r} cannot be written: "
                                               f"{str(tmp_path / 'figures')!r} is a file, not a folder.")


@pytest.mark.slow
def test_the_ladder_figure_of_a_ladder_and_its_target(tmp_path, capsys):
    import ladder_simulation
    import ladder_synthetic

    ladder_synthetic.write_ladder(tmp_path / "results", "lad", ladder_simulation.CURVES,
                                  ladder_synthetic.chinchilla_rungs(3), seeds=2)
    out = tmp_path / "ladder.svg"
    assert main(["plot", "ladder", "lad", "--results", str(tmp_path / "results"), "--out", str(out), "--target-flops",
                 "1e16"]) == 0
    assert out.read_bytes().startswith(b"<?xml") and capsys.readouterr().out.strip() == str(out)


@pytest.mark.parametrize("args, message", [
    (["plot", "lr", "qk", "--out", "x.png", "--target-flops", "1e16"],
     "--target-flops applies to the ladder figure only, not 'lr'."),
    (["plot", "ladder", "qk", "--out", "x.png", "--target-params", "0"],
     "--target-params 0 is invalid: it must be a positive number."),
    (["plot", "ladder", "qk", "--out", "x.png"],
     "sweep 'qk' is not a ladder: no arm has finished runs at two sizes (d_model and n_layers); "
                                                 "declare one with Ablation(ladder=ladder(...)) (docs/sweeps.md)."),
])
def test_ladder_bad_input_is_one_line_and_exit_2(results, capsys, args, message):
    assert main([*args, "--results", str(results)]) == 2
    assert capsys.readouterr().err.strip() == f"harness plot: error: {message}"
