"""A sweep's plan is its identity: what a launch would change about the plan a sweep already has.

A relaunch may only run the same plan again, or add seeds to it (every stored cell kept, with its run id).
Anything else — other steps, fewer seeds, other `--set` values, another source file or question, other arms
or LRs, another search — would replace the sweep's plan, and with it what `compare` and the report show, so
`harness sweep` refuses it unless asked (`--replace`, or another `--name`). Torch-free: it compares the stored
plan's rows (`db.read_plan`) and description (`sweep.json`) with the new ones.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

META_COMPARED = ("source", "question", "baseline", "axes", "trials")
CONFIG_COLUMNS = ("model", "train", "data")
SHOWN = 4  # differences named in one line; the rest are counted


@dataclass(frozen=True)
class PlanChange:
    """How a new plan differs from the stored one: `differences` (one phrase each) that would replace it, the
    seeds per (arm, lr) before and after where they differ (`seeds`; `fewer` when some (arm, lr) would lose
    seeds, whose finished runs would drop out of the sweep), and `additions` that only extend it (more
    confirmation seeds of a search)."""

    differences: tuple[str, ...]
    seeds: tuple[int, int] | None = None
    fewer: bool = False
    additions: tuple[str, ...] = ()

    @property
    def same(self) -> bool:
        return not self.differences and self.seeds is None and not self.additions

    @property
    def extends_only(self) -> bool:
        """More seeds or confirmation seeds, every stored cell kept."""
        return not self.differences and not self.fewer and not self.same

    def extension(self) -> str:
        """What an extending launch adds, as one clause."""
        added = (([f"seeds ({self.seeds[0]} → {self.seeds[1]} per arm and LR at most)"] if self.seeds else [])
                 + list(self.additions))
        return "adds " + " and ".join(added)

    def refusal(self) -> str:
        """Every difference, fewer seeds included, as one clause."""
        found = list(self.differences)
        if self.fewer and self.seeds is not None:  # fewer is only ever found with the seeds that differ
            found.append(f"seeds {self.seeds[0]} → {self.seeds[1]} (fewer: finished seeds would drop out)")
        named = found[:SHOWN] + ([f"and {len(found) - SHOWN} more"] if len(found) > SHOWN else [])
        return "; ".join(named)


def _text(value: Any) -> str:
    return "default" if value is None else json.dumps(value) if isinstance(value, str) else format(value, "g") \
        if isinstance(value, float) else str(value)


def _search(meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A search's studies without what does not define them (their number, their base cell, their confirmations)."""
    return [{k: v for k, v in s.items() if k not in ("index", "cell", "confirm_seeds")}
            for s in meta.get("studies") or []]


def _confirm_seeds(meta: Mapping[str, Any]) -> int:
    return max((s.get("confirm_seeds", 0) for s in meta.get("studies") or []), default=0)


def _meta_differences(stored: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(what differs in the sweeps' descriptions, what the new one only adds)."""
    found = [f"{name} {_text(stored.get(name))} → {_text(new.get(name))}" for name in META_COMPARED
             if stored.get(name) != new.get(name)]
    if _search(stored) != _search(new):
        found.append("the search (tune=, trials, sampler or pruner)")
    before, after = _confirm_seeds(stored), _confirm_seeds(new)
    if after < before:
        found.append(f"confirm_seeds {before} → {after} (fewer: confirmations would drop out)")
    return found, [f"confirmation seeds ({before} → {after})"] if after > before else []


def _config_differences(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, str]:
    """field → 'old → new' between two cells' stored configs (changed fields as JSON; absent: the default)."""
    found = {}
    for column in CONFIG_COLUMNS:
        before, after = json.loads(old[column] or "{}"), json.loads(new[column] or "{}")
        for field in sorted(set(before) | set(after)):
            if field != "seed" and before.get(field) != after.get(field):
                found[field] = f"{field} {_text(before.get(field))} → {_text(after.get(field))}"
    return found


def _by_arm_lr(rows: Sequence[Mapping[str, Any]]) -> dict[tuple, dict[int, Mapping[str, Any]]]:
    cells: dict[tuple, dict[int, Mapping[str, Any]]] = defaultdict(dict)
    for row in rows:
        cells[(row["arm"], row["lr"])][row["seed"]] = row
    return cells


def _cell_differences(stored: Sequence[Mapping[str, Any]],
                      new: Sequence[Mapping[str, Any]]) -> tuple[list[str], tuple | None, bool]:
    """(what differs between the two plans' cells but their seed counts, (seeds before, seeds after) where the
    counts differ, whether some (arm, lr) has fewer)."""
    old_cells, new_cells = _by_arm_lr(stored), _by_arm_lr(new)
    found: dict[str, str] = {}
    for key in sorted(set(old_cells) - set(new_cells), key=str):
        found[f"drop {key}"] = f"drops arm {key[0]} at lr={key[1]:g}"
    for key in sorted(set(new_cells) - set(old_cells), key=str):
        found[f"add {key}"] = f"adds arm {key[0]} at lr={key[1]:g}"
    for key in set(old_cells) & set(new_cells):
        for seed in set(old_cells[key]) & set(new_cells[key]):
            if old_cells[key][seed]["run_id"] != new_cells[key][seed]["run_id"]:
                found.update(_config_differences(old_cells[key][seed], new_cells[key][seed]))
    counts = [(len(old_cells[k]), len(new_cells[k])) for k in set(old_cells) & set(new_cells)]
    changed = [pair for pair in counts if pair[0] != pair[1]]
    seeds = (max(o for o, _ in changed), max(n for _, n in changed)) if changed else None
    return list(found.values()), seeds, any(n < o for o, n in changed)


def plan_change(stored_meta: Mapping[str, Any], stored_rows: Sequence[Mapping[str, Any]],
                new_meta: Mapping[str, Any], new_rows: Sequence[Mapping[str, Any]]) -> PlanChange:
    """What launching the new plan (its description and cell rows) would change about the stored one."""
    cells, seeds, fewer = _cell_differences(stored_rows, new_rows)
    meta, added = _meta_differences(stored_meta, new_meta)
    return PlanChange(tuple(meta + cells), seeds, fewer, tuple(added))


def merged_rows(stored: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The new plan's cells, then the stored cells it lacks (seeds an earlier round of --until-decided added),
    numbered in that order: a round never drops a cell from the sweep."""
    keys = {(row["arm"], row["lr"], row["seed"]) for row in new}
    rows = ([dict(row) for row in new]
            + [dict(row) for row in stored if (row["arm"], row["lr"], row["seed"]) not in keys])
    return [{**row, "cell": i} for i, row in enumerate(rows)]
