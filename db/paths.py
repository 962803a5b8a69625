"""Where results live on disk: the results directory, one folder per run, one folder per table.

Layout (every file is immutable once it has its final name):

    <results>/SCHEMA_VERSION
    <results>/runs/<run_id>/manifest/s<segment>.parquet      one per writer segment, written at open
    <results>/runs/<run_id>/status/s<segment>.parquet        one per segment, written at close
    <results>/runs/<run_id>/<table>/s<segment>-<seq>.parquet  metrics, layer_metrics, events shards
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from db.errors import DbError

ENV_VAR = "HARNESS_RESULTS"
DEFAULT_RESULTS_DIR = "results"
RUNS_DIR = "runs"
RUN_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._=+-]{0,199}$")
SHARD_SUFFIX = ".parquet"


def resolve_results_dir(arg: str | os.PathLike | None = None) -> Path:
    """The results directory: `arg` (e.g. `--results`) if given, else $HARNESS_RESULTS, else ./results."""
    if arg not in (None, ""):
        return Path(arg)
    return Path(os.environ.get(ENV_VAR) or DEFAULT_RESULTS_DIR)


def check_run_id(run_id: str) -> None:
    """Run ids become folder names, so they must be plain: letters, digits and `._=+-`, not starting with one of
    those."""
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.match(run_id):
        raise DbError(
            f"run_id={run_id!r} is invalid: use 1-200 characters from letters, digits and '._=+-', "
            "starting with a letter or digit."
        )


def run_dir(results_dir: Path, run_id: str) -> Path:
    """The folder holding every shard of one run."""
    return Path(results_dir) / RUNS_DIR / run_id


def segment_shard_name(segment: int) -> str:
    """File name of a manifest or status shard of `segment`."""
    return f"s{segment:04d}{SHARD_SUFFIX}"


def data_shard_name(segment: int, seq: int) -> str:
    """File name of the `seq`-th data shard written by `segment`; names sort in write order."""
    return f"s{segment:04d}-{seq:06d}{SHARD_SUFFIX}"


def parse_segment(name: str) -> int:
    """The segment number encoded in a shard file name (`s0003.parquet`, `s0003-000012.parquet`)."""
    return int(name[1:5])


def is_shard_name(name: str) -> bool:
    """Published shards only: temp files start with '.' and never end in `.parquet`."""
    return name.startswith("s") and name.endswith(SHARD_SUFFIX)


def compacted_shard_name(segment: int, first_seq: int, last_seq: int) -> str:
    """File name of the shard that replaces data shards `first_seq..last_seq` of `segment` (see compact)."""
    return f"s{segment:04d}-{first_seq:06d}-{last_seq:06d}{SHARD_SUFFIX}"


def shard_span(name: str) -> tuple[int, int, int, bool]:
    """(segment, first seq, last seq, compacted?) of a data shard file name."""
    parts = name[: -len(SHARD_SUFFIX)].split("-")
    seqs = [int(part) for part in parts[1:]]
    return int(parts[0][1:]), seqs[0], seqs[-1], len(seqs) == 2


def superseded_by_compaction(names: list[str]) -> set[str]:
    """Data shard names made redundant by a compacted shard in the same folder (left by an interrupted compact)."""
    spans = [(name, *shard_span(name)) for name in names]
    merged = [(segment, first, last) for _, segment, first, last, compacted in spans if compacted]
    return {
        name for name, segment, first, _, compacted in spans
        if not compacted and any(s == segment and lo <= first <= hi for s, lo, hi in merged)
    }
