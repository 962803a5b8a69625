"""`harness sweep`'s options become one frozen `SweepRequest` (cli/sweep.py): its defaults are the constants the
workers, the layout and the SLURM request define, and building the parser imports neither db nor the planner."""

import dataclasses
import subprocess
import sys

import pytest

from cli.main import build_parser
from cli.sweep import SweepRequest
from cli.sweep_slurm import SlurmOptions
from cli.until_decided import UntilDecided
from errors import ConfigError
from experiments.backends.layout import Layout
from experiments.workers.options import DEFAULT_RETRIES, DEFAULT_STALE_AFTER, HEARTBEAT_EVERY


def request(*argv: str) -> SweepRequest:
    return SweepRequest.from_args(build_parser().parse_args(["sweep", "qk_stability", *argv]))


def test_the_defaults_are_the_constants_and_the_request_is_frozen():
    given = request()
    assert (given.retries, given.stale_after, given.heartbeat_every) == (DEFAULT_RETRIES, DEFAULT_STALE_AFTER,
                                                                         HEARTBEAT_EVERY)
    assert (given.layout, given.slurm, given.until) == (Layout(), SlurmOptions(), UntilDecided())
    with pytest.raises(dataclasses.FrozenInstanceError):
        given.seeds = 3


def test_options_are_parsed_into_their_parts():
    given = request("--workers", "4", "--set", "d_model=64", "--set", "lr=0.01", "--backend", "slurm",
                    "--setup", "module load cuda", "--max-seeds", "8", "--no-report")
    assert given.layout == Layout(workers=4) and given.overrides == ("d_model=64", "lr=0.01")
    assert given.slurm.backend == "slurm" and given.slurm.setup == ("module load cuda",)
    assert given.slurm.given() == ["setup"] and given.slurm.resources().setup == ("module load cuda",)
    assert given.until == UntilDecided(max_seeds=8) and given.until.requested and not given.report


@pytest.mark.parametrize("argv, message", [
    (("--seeds", "0"), "--seeds 0 is invalid"),
    (("--retries", "-1"), "--retries -1 is invalid"),
    (("--stale-after", "9"), "--stale-after 9 is invalid"),
    (("--workers-per-device", "2", "--devices-per-cell", "2"), "a cell on several devices does not share them"),
    (("--dry-run", "--status"), "--dry-run and --status: give one."),
])
def test_a_bad_option_is_refused_when_the_request_is_made(argv, message):
    with pytest.raises(ConfigError, match=message):
        request(*argv)


def test_building_the_parser_imports_neither_db_nor_the_planner():
    code = ("import sys; from cli.main import build_parser; build_parser(); "
            "print(sorted({'db', 'experiments.plan.expand', 'experiments.declare.load'} & set(sys.modules)))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"
