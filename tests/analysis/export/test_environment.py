import os

from analysis.export.environment import environment


def test_the_switches_hold_inside_and_the_environment_is_restored_after(monkeypatch):
    monkeypatch.setenv("HARNESS_TEST_SET", "before")
    monkeypatch.delenv("HARNESS_TEST_UNSET", raising=False)
    try:
        with environment({"HARNESS_TEST_SET": "inside", "HARNESS_TEST_UNSET": "inside"}):
            assert (os.environ["HARNESS_TEST_SET"], os.environ["HARNESS_TEST_UNSET"]) == ("inside", "inside")
            raise KeyError("an export that fails")
    except KeyError:
        pass
    assert os.environ["HARNESS_TEST_SET"] == "before" and "HARNESS_TEST_UNSET" not in os.environ
