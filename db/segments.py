"""Which segments of a run count: the fencing and result-first rule of docs/internals.md, in Python.

The DuckDB views apply the same rule in SQL (`COUNTING_SEGMENTS_SQL`); tests/db/test_segments.py checks the
two agree on random histories. Segments are taken in the order they were opened (their number):
  (a) a segment opened after one that carries a higher claim generation was opened by a writer that had lost
      its claim: it is fenced out;
  (b) a segment opened after the first counting segment that closed with a result adds nothing: a result is
      final.
Everything a reader shows of a run (status, metrics, summary, last step) comes from the counting segments.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

RESULTS = ("completed", "diverged", "pruned")


@dataclass(frozen=True)
class Segment:
    """One writer segment: its number, the claim generation it was written under (None outside the claim
    protocol) and how it ended (None: no status yet)."""

    number: int
    claim: int | None
    status: str | None


def counting_segments(segments: Iterable[Segment]) -> list[Segment]:
    """The segments that count, in order (see the module docstring)."""
    counting: list[Segment] = []
    highest: int | None = None  # the highest generation among the segments opened so far
    for segment in sorted(segments, key=lambda s: s.number):
        fenced = segment.claim is not None and highest is not None and segment.claim < highest
        if segment.claim is not None:
            highest = segment.claim if highest is None else max(highest, segment.claim)
        if fenced:
            continue
        counting.append(segment)
        if segment.status in RESULTS:
            break
    return counting


# The same rule over the `_segments` relation (run_id, segment, claim, status, ...): (a) as a running max of
# the generations opened before, (b) as the first counting result.
COUNTING_SEGMENTS_SQL = """
WITH ordered AS (
    SELECT *, max(claim) OVER (PARTITION BY run_id ORDER BY segment
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS claim_before
    FROM _segments
), unfenced AS (
    SELECT * EXCLUDE (claim_before) FROM ordered
    WHERE claim IS NULL OR claim_before IS NULL OR claim >= claim_before
), first_result AS (
    SELECT run_id, min(segment) AS result_segment FROM unfenced
    WHERE status IN ('completed', 'diverged', 'pruned') GROUP BY run_id
)
SELECT u.* FROM unfenced u LEFT JOIN first_result f USING (run_id)
WHERE f.result_segment IS NULL OR u.segment <= f.result_segment
"""
