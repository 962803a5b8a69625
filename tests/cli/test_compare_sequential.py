"""`harness compare --sequential` on a store written with db.RunWriter alone: the anytime-valid test's columns,
its decisions and where they came checked against the scipy oracle on the planted values (not the store)."""

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from cli.main import main

sys.path.insert(0, str(Path(__file__).parents[1] / "analysis"))  # the analysis tests' store writer and oracle
import synthetic  # noqa: E402
from sequential_oracle import oracle_decision  # noqa: E402

ARMS = {"base": (0.0, 0.002, 9), "better": (-0.02, 0.002, 9), "same": (0.0, 0.04, 9), "tiny": (0.0005, 0.0005, 9),
        "few": (-0.05, 0.002, 4)}
# "same" diverged where the baseline completed: that seed is no pair of its loss test, and it bars a loss claim in its
# favour; "barred" is "better" with one such divergence: the survivors resolve it, the outcome model does not.
ARMS["barred"] = ARMS["better"]
DIVERGED = {("same", None, 2): 5, ("barred", None, 6): 5}
SEQUENTIAL = ["cs_low", "cs_high", "p_seq", "p_seq_holm", "seq_verdict", "decided_at", "seq_decided_by"]
TESTS = 2 * (len(ARMS) - 1)  # the Holm family: every row's loss and divergence test


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("sequential") / "results"
    planted = synthetic.write_planted(path, "seq", ARMS, steps=12, diverged=DIVERGED)
    return path, planted


def expected(planted, arm):
    """The oracle's (verdict, decided_at) on the planted differences from the baseline, seed by seed (the strongest
    row of the table: Holm's first step, α over the whole family)."""
    seeds = [s for s in range(ARMS[arm][2]) if (arm, None, s) not in DIVERGED]
    return oracle_decision([planted[(arm, None, s)] - planted[("base", None, s)] for s in seeds], 0.01, TESTS)


@pytest.mark.slow
def test_sequential_adds_the_anytime_valid_columns_and_their_first_decision(store, capsys):
    results, planted = store
    assert main(["compare", "seq", "--results", str(results), "--baseline", "base", "--sequential", "--format",
                 "json"]) == 0
    rows = {row["arm"]: row for row in json.loads(capsys.readouterr().out)}
    assert list(rows["base"])[-len(SEQUENTIAL):] == SEQUENTIAL
    assert (rows["base"]["seq_verdict"], rows["base"]["decided_at"], rows["base"]["cs_low"]) == ("baseline", None, None)
    found = {arm: (rows[arm]["seq_verdict"], rows[arm]["decided_at"]) for arm in ("better", "same", "tiny", "few")}
    assert found == {arm: expected(planted, arm) for arm in found}
    assert ([found[arm][0] for arm in ("better", "same", "tiny", "few")]
            == ["better", "undecided", "negligible", "undecided"])
    # the survivors alone would decide "barred" (the oracle on them), its divergence bars it, in both tables
    assert expected(planted, "barred")[0] == "better" and rows["barred"]["cs_high"] < 0
    assert ((rows["barred"]["seq_verdict"], rows["barred"]["verdict"], rows["barred"]["arm_only"])
            == ("undecided", "within noise", 1))
    assert rows["few"]["cs_low"] is None and rows["few"]["cs_high"] is None  # 4 pairs: still the whole line
    assert rows["better"]["cs_high"] < 0 and rows["tiny"]["cs_low"] > -0.01 and rows["tiny"]["cs_high"] < 0.01


def test_the_flag_only_appends_columns(store, capsys):
    results, _ = store
    main(["compare", "seq", "--results", str(results), "--baseline", "base", "--format", "csv"])
    plain = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    main(["compare", "seq", "--results", str(results), "--baseline", "base", "--format", "csv", "--sequential"])
    sequential = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert list(sequential[0]) == [*plain[0], *SEQUENTIAL]
    assert [(r["arm"], r["verdict"]) for r in sequential] == [(r["arm"], r["verdict"]) for r in plain]
    assert [sequential[0][c] for c in SEQUENTIAL] == ["", "", "", "", "baseline", "", ""]
