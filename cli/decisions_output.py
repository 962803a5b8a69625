"""What `harness decisions` prints: the rungs' decision accuracy, the cheapest rung that decides, and each
decision's picks, as headed tables, CSV blocks or one JSON object."""

from __future__ import annotations

import json

from cli.compare import format_rows, frame_rows

MARKS = {1: "✓", -1: "✗", 0: "·"}  # the pick agrees with the reference, opposes it, or there is none
RESOLVED_MARK = "!"


def _counts(result) -> str:
    from analysis.ladder.decision_verdicts import Reference

    apart = [(result.counted(Reference.TIE), "negligible"),
             (result.counted(Reference.UNRESOLVED), "unresolved (within noise, no CI)"),
             (result.counted(Reference.NOT_RUN), "not run there")]
    return (f"At the reference: {result.counted(Reference.DECIDED)} decided (better, worse, more or less stable), "
            "scored below; " + ", ".join(f"{n} {what}" for n, what in apart) + ": counted apart.")


def cheapest_line(result) -> str:
    """The cheapest rung that meets the target, or why none does."""
    rule = f"its accuracy's 95% lower bound ≥ {result.target:g}"
    found = result.cheapest
    if found is not None:
        interval = f"95% [{found['low']:.3g}, {found['high']:.3g}]"
        return (f"Cheapest rung that decides ({rule}): {found['rung']}, at {found['compute_share']:.3g} of "
                f"the reference's compute: accuracy {found['accuracy']:.3g} ({interval}).")
    scored = result.rungs.dropna(subset=["low"])
    if scored.empty:
        return f"No rung below the reference decides ({rule}): no decision the reference decides ran at a smaller rung."
    best = scored.loc[scored["low"].idxmax()]
    return (f"No rung below the reference decides ({rule}): the highest lower bound is {best['low']:.3g}, at "
            f"{best['rung']} (accuracy {best['accuracy']:.3g}).")


def _mark(pick: dict | None, order: int | None) -> str:
    if pick is None or order is None:
        return ""
    from analysis.ladder.decision_verdicts import ORDER

    own = ORDER.get(pick["verdict"], 0)
    return MARKS[0 if pick["pick"] == 0 else 1 if pick["pick"] == order else -1] + (RESOLVED_MARK if own else "")


def decision_rows(result) -> list[dict]:
    """One row per decision: its reference, winner, a mark per rung below the reference, settles_at, flips_at."""
    from analysis.ladder.decision_verdicts import ORDER

    picks = {(p["sweep"], p["first"], p["second"], p["rung"]): p for p in frame_rows(result.picks)}
    rows = []
    for d in frame_rows(result.decisions):
        order = ORDER.get(d["verdict"]) if d["reference"] == "decided" else None
        marks = {rung: _mark(picks.get((d["sweep"], d["first"], d["second"], rung)), order)
                 for rung in result.data.rungs[:-1]}
        rows.append({**d, "reference": d["verdict"] if d["reference"] != "not at the reference" else d["reference"],
                     **marks, "flips_at": " ".join(d["flips_at"])})
    return rows


def decisions_output(result, format: str) -> str:
    """The rung table, the cheapest rung and the decisions: headed tables, CSV blocks (rungs, decisions, picks,
    separated by blank lines) or one JSON object."""
    from analysis.ladder.decisions import DECISION_COLUMNS, PICK_COLUMNS, RUNG_COLUMNS

    rungs, data = frame_rows(result.rungs), result.data
    if format in ("csv", "json"):
        decisions = [{**d, "flips_at": " ".join(d["flips_at"])} for d in frame_rows(result.decisions)]
        blocks = {"rungs": (rungs, RUNG_COLUMNS), "decisions": (decisions, DECISION_COLUMNS),
                  "picks": (frame_rows(result.picks), PICK_COLUMNS)}
        if format == "csv":
            return "\n\n".join(format_rows(rows, columns, "csv") for rows, columns in blocks.values())
        cheapest = result.cheapest
        return json.dumps({"reference": {"rung": data.reference, "compute": data.compute(data.reference)},
                           "target": result.target, "cheapest": None if cheapest is None else cheapest["rung"],
                           **{name: json.loads(format_rows(rows, columns, "json"))
                              for name, (rows, columns) in blocks.items()}})
    columns = ["sweep", "decision", "reference", "winner", *data.rungs[:-1], "settles_at", "flips_at"]
    return (f"Decision accuracy of {len(result.decisions)} decisions in {len(data.variants)} sweeps; the reference is "
            f"the largest rung, {data.reference} ({data.compute(data.reference):.3g} FLOPs a run).\n{_counts(result)}\n"
            f"{format_rows(rungs, RUNG_COLUMNS, 'table')}\n{cheapest_line(result)}\n\n"
            f"Each decision's pick at each rung against the reference's order: {MARKS[1]} the same, {MARKS[-1]} the "
            f"opposite, {MARKS[0]} none (no pair of outcomes); {RESOLVED_MARK}: resolved at that rung itself.\n"
            f"{format_rows(decision_rows(result), columns, 'table')}")
