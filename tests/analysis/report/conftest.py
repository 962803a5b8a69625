"""The planted sweep's report, written once per session for the page and browser tests."""

import pytest

from analysis.report import write_report


@pytest.fixture(scope="session")
def planted_report(planted_store):
    """Path of the finished planted sweep's report at its default place."""
    return write_report(planted_store[0], "planted")
