"""Which segments of a run count: the fencing and result-first rule of docs/internals.md, in Python.

The DuckDB views apply the same rule in SQL (`COUNTING_SEGMENTS_SQL`); tests/db/test_segments.py checks the
two agree on random histories. Segments are taken in the order they were opened (their number):
  (a) a segment opened after one that carries a higher claim generation was opened by a writer that had lost
      its claim: it is fenced out;
  (b) a result is final by generation: a result recorded under claim g *stands* unless a segment opened after
      it (and not fenced out) closed with a result under a higher generation, whose writer had taken the cell
      over: the later generation's result always wins over the earlier one's. A segment opened after the first
      standing result adds nothing.
The store's writers never leave a result that does not stand (db/outcomes.py refuses a superseded writer's late
status, and a later generation's open once an earlier one holds the result); (b) keeps a store written before
them, which may hold such a late result, answering with the later generation's.
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


def _unfenced(segments: Iterable[Segment]) -> list[Segment]:
    """Rule (a): the segments, in order, less those opened after a higher generation."""
    kept: list[Segment] = []
    highest: int | None = None  # the highest generation among the segments opened so far
    for segment in sorted(segments, key=lambda s: s.number):
        fenced = segment.claim is not None and highest is not None and segment.claim < highest
        if segment.claim is not None:
            highest = segment.claim if highest is None else max(highest, segment.claim)
        if not fenced:
            kept.append(segment)
    return kept


def counting_segments(segments: Iterable[Segment]) -> list[Segment]:
    """The segments that count, in order (see the module docstring)."""
    unfenced = _unfenced(segments)
    later: int | None = None  # the highest generation of a result recorded after the segment at hand
    superseded = [False] * len(unfenced)
    for i in range(len(unfenced) - 1, -1, -1):
        segment = unfenced[i]
        if segment.claim is not None and segment.status in RESULTS:
            superseded[i] = later is not None and later > segment.claim
            later = segment.claim if later is None else max(later, segment.claim)
    for i, segment in enumerate(unfenced):
        if segment.status in RESULTS and not superseded[i]:
            return unfenced[: i + 1]
    return unfenced


# The same rule over the `_segments` relation (run_id, segment, claim, status, ...): (a) as a running max of
# the generations opened before, (b) as the first result with no result of a higher generation after it.
COUNTING_SEGMENTS_SQL = """
WITH ordered AS (
    SELECT *, max(claim) OVER (PARTITION BY run_id ORDER BY segment
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS claim_before
    FROM _segments
), unfenced AS (
    SELECT * EXCLUDE (claim_before) FROM ordered
    WHERE claim IS NULL OR claim_before IS NULL OR claim >= claim_before
), judged AS (
    SELECT *, max(claim) FILTER (WHERE status IN ('completed', 'diverged', 'pruned')) OVER (PARTITION BY run_id
        ORDER BY segment ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS result_claim_after
    FROM unfenced
), first_result AS (
    SELECT run_id, min(segment) AS result_segment FROM judged
    WHERE status IN ('completed', 'diverged', 'pruned')
        AND (claim IS NULL OR result_claim_after IS NULL OR result_claim_after <= claim)
    GROUP BY run_id
)
SELECT u.* FROM unfenced u LEFT JOIN first_result f USING (run_id)
WHERE f.result_segment IS NULL OR u.segment <= f.result_segment
"""
