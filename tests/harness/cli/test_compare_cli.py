import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.main import main

sys.path.insert(0, str(Path(__file__).parents[2] / "analysis"))  # the synthetic-store writer of the analysis tests
import synthetic  # noqa: E402

COLUMNS = "arm,lr,n,diverged,mean,ci_low,ci_high,delta,delta_ci_low,delta_ci_high,p,p_holm,verdict,seeds_needed"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Sweep 'qk' written with db.RunWriter alone (no plan, no Ablation): a real effect and a null one."""
    path = tmp_path_factory.mktemp("compare") / "results"
    synthetic.write_planted(path, "qk", {"base": (0.0, 0.002, 4), "rmsnorm": (-0.1, 0.002, 4), "same": (0.0, 0.04, 4)}, steps=12)
    return path


def test_table_has_one_row_per_arm_with_verdicts(results, capsys):
    assert main(["compare", "qk", "--results", str(results), "--baseline", "base"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == COLUMNS.split(",")
    verdicts = {line.split()[0]: line for line in lines[2:]}
    assert verdicts["base"].rstrip().endswith("baseline")
    assert "better" in verdicts["rmsnorm"] and "within noise" in verdicts["same"]


def test_csv_and_json_carry_the_same_rows(results, capsys):
    main(["compare", "qk", "--results", str(results), "--baseline", "base", "--format", "csv"])
    csv_lines = capsys.readouterr().out.splitlines()
    assert csv_lines[0] == COLUMNS and len(csv_lines) == 4
    assert csv_lines[1].startswith("base,,4,0,") and csv_lines[1].endswith(",,,,,,baseline,")  # no lr: empty, like the deltas
    main(["compare", "qk", "--results", str(results), "--baseline", "base", "--format", "json", "--min-effect", "0.2"])
    rows = json.loads(capsys.readouterr().out)
    assert [row["arm"] for row in rows] == ["base", "rmsnorm", "same"]
    assert rows[0]["delta"] is None and rows[1]["verdict"] == "negligible"  # -0.1 lies inside ±0.2


@pytest.mark.parametrize("args, message", [
    (["compare", "kq"], "harness compare: error: no sweep named 'kq' in the results store; did you mean 'qk'?"),
    (["compare", "qk", "--baseline", "rms"], "harness compare: error: baseline 'rms' is not an arm of sweep 'qk'; did you mean 'rmsnorm'?"),
    (["compare", "qk", "--metric", "final_val_los"], "harness compare: error: metric 'final_val_los' is not a numeric column of the runs view; did you mean 'final_val_loss'?"),
])
def test_bad_input_is_one_line_and_exit_2(results, capsys, args, message):
    assert main([*args, "--results", str(results)]) == 2
    assert capsys.readouterr().err.strip() == message


def test_running_sweep_is_labelled_partial_on_stderr(tmp_path, capsys):
    synthetic.write_run(tmp_path, "a0", sweep="live", arm="a", seed=0, lr=None, final=3.0, steps=12)
    synthetic.write_run(tmp_path, "a1", sweep="live", arm="a", seed=1, lr=None, final=3.0, steps=12, status=None)
    assert main(["compare", "live", "--results", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip() == "harness compare: sweep 'live' is still running: 1 of 2 cells; partial"
    assert "baseline" in captured.out


def test_a_sweep_with_no_finished_runs_exits_2(tmp_path, capsys):
    synthetic.write_run(tmp_path, "a0", sweep="live", arm="a", seed=0, lr=None, final=3.0, steps=12, status=None)
    assert main(["compare", "live", "--results", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == "harness compare: error: sweep 'live' has no finished runs yet (0 of 1 cells; partial)."


def test_the_command_imports_no_plotting_and_no_torch(results):
    code = (
        "import sys; from harness.cli.main import main; main(['compare', 'qk', '--results', sys.argv[1]]); "
        "print(sorted(m for m in ('torch', 'matplotlib', 'seaborn') if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(results)], capture_output=True, text=True, check=True)
    assert result.stderr.strip() == "[]"


def test_the_store_is_read_in_a_child_and_scipy_imported_only_here(results):
    # The latency design of `harness compare` (harness/cli/forked.py): this process never imports DuckDB,
    # and the reader in the child never imports scipy.
    here = ("from harness.cli.main import main; import sys; "
            f"main(['compare', 'qk', '--results', {str(results)!r}, '--baseline', 'base']); "
            "print(sorted(m for m in ('duckdb', 'pyarrow', 'scipy.stats') if m in sys.modules), file=sys.stderr)")
    child = ("from harness.cli.compare import read_cells; import sys; "
             f"read_cells({str(results)!r}, 'qk', 'final_val_loss', 'base'); "
             "print(sorted(m for m in ('duckdb', 'scipy', 'pandas') if m in sys.modules), file=sys.stderr)")
    loaded = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr.strip().splitlines()[-1]
              for code in (here, child)]
    assert loaded == ["['scipy.stats']", "['duckdb']"]
