"""`harness sweeps`: each sweep's tags beside its progress; `SWEEP --tag/--untag/--archive/--unarchive` change them
(archived sweeps listed only with --archived, never deleted); a mistake is one line and exit 2."""

import pytest

import db
from cli.main import main


@pytest.fixture
def store(tmp_path):
    """Two sweeps, `qk` and `mlp`, of one finished run each."""
    for sweep in ("qk", "mlp"):
        with db.RunWriter.open(tmp_path, f"{sweep}-0", sweep=sweep, arm="a", seed=0, config={"lr": 1e-3}) as writer:
            writer.log_metrics(3, {"val_loss": 3.0, "train_loss": 3.1})
    return tmp_path


def sweeps(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["sweeps", *args])
    out, err = capsys.readouterr()
    return code, out, err


def rows(out: str) -> dict[str, str]:
    """sweep → its line of the table."""
    return {line.split()[0]: line for line in out.splitlines()[2:] if line and not line[0].isdigit()}


def test_tags_show_beside_the_progress_and_archived_sweeps_only_on_request(store, capsys):
    where = ["--results", str(store)]
    tagged = sweeps(capsys, "qk", "--tag", "paper", "--tag", "qk/v2", *where)
    assert tagged == (0, "sweep qk: tags paper, qk/v2; shown.\n", "")
    code, out, _ = sweeps(capsys, "mlp", "--archive", *where)
    assert code == 0 and out.startswith("sweep mlp: tags none; archived: hidden from `harness sweeps`")
    code, out, _ = sweeps(capsys, *where)
    assert code == 0 and list(rows(out)) == ["qk"] and rows(out)["qk"].split()[-2:] == ["paper,", "qk/v2"]
    assert out.splitlines()[0].split()[-2:] == ["tags", "question"]
    assert "1 archived sweep not shown (`harness sweeps --archived` lists them)." in out
    code, out, _ = sweeps(capsys, "--archived", *where)
    assert list(rows(out)) == ["mlp", "qk"] and rows(out)["mlp"].split()[-1] == "yes"
    sweeps(capsys, "mlp", "--unarchive", "--tag", "old", *where)
    sweeps(capsys, "qk", "--untag", "paper", *where)
    code, out, _ = sweeps(capsys, *where)
    assert list(rows(out)) == ["mlp", "qk"]
    assert rows(out)["mlp"].split()[-1] == "old" and rows(out)["qk"].split()[-1] == "qk/v2"
    assert (store / "runs" / "mlp-0").is_dir()  # archiving deleted nothing


@pytest.mark.parametrize("args, message", [
    (["qq", "--tag", "x"], "no sweep 'qq' in "),
    (["qk", "--tag", "two words"], "tag 'two words' is invalid"),
    (["--tag", "x"], "give its name (`harness sweeps SWEEP --tag T`)"),
    (["qk", "--history", "--archive"], "and no --history"),
    (["qk"], "give a sweep name and --history"),
])
def test_a_mistake_is_one_line_and_exit_2(store, capsys, args, message):
    code, out, err = sweeps(capsys, *args, "--results", str(store))
    assert code == 2 and out == "" and err.count("\n") == 1 and message in err


def test_archive_and_unarchive_together_are_refused(store, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["sweeps", "qk", "--archive", "--unarchive", "--results", str(store)])
    assert stopped.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_a_damaged_labels_file_is_a_warning_in_the_listing_and_refuses_a_change(store, capsys):
    (store / "sweeps" / "qk").mkdir(parents=True)
    (store / "sweeps" / "qk" / "labels.json").write_text("{")
    code, out, err = sweeps(capsys, "--results", str(store))
    assert code == 0 and list(rows(out)) == ["mlp", "qk"]
    assert err.startswith("harness sweeps: warning: ") and "labels.json is damaged" in err and err.count("\n") == 1
    code, _, err = sweeps(capsys, "qk", "--tag", "x", "--results", str(store))
    assert code == 2 and "labels.json is damaged" in err
    assert (store / "sweeps" / "qk" / "labels.json").read_text() == "{"
