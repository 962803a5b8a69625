"""Where a sweep's runs and progress come from: the `sweep_cells` and `sweeps` views (docs/internals.md).

Membership lives in `sweep_cells`, so a run adopted from another sweep counts here too; runs written with
`db.RunWriter` alone form a sweep under their own sweep, arm and seed labels, with `lr` from their config.
No pandas here: `harness compare` reads a sweep through this module alone (pandas costs ~0.5 s to import).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Callable, TypeVar

from analysis.errors import AnalysisError, closest
from db.errors import StoreDamage
from db.plans import REPAIR as PLAN_REPAIR
from db.sql import quote_literal

if TYPE_CHECKING:
    import duckdb

FINISHED = ("completed", "diverged")  # results: what means and tests are made of
# The `sweeps` view counts cells by status in one column each. A sweep is running while any cell waits (pending,
# interrupted, or crashed and so to be resumed; the view counts all three as `pending`) or runs; a failed
# cell is reported, not waited for; every other count (completed, diverged, pruned, …) is a cell that is done.
UNFINISHED = ("running", "pending")
NOT_COUNTS = ("sweep", "question", "baseline", "axes", "n_cells", "created_at")
RESUMABLE = ("interrupted", "crashed")  # waiting cells that a stop left behind (the view counts them as pending)
DAMAGED = "damaged"  # a cell whose run has a damaged file (db/damage_views.py): neither a result nor waiting
T = TypeVar("T")
FINISHED_STATE, RUNNING_STATE, INTERRUPTED_STATE = "finished", "running", "interrupted"


def membership_sql(con, sweep: str) -> str:
    """A SELECT of one row per run of `sweep`: sweep, arm, lr, seed, trial, confirms, arm_values, then every
    `runs` column."""
    runs_columns = {row[0] for row in con.execute("DESCRIBE runs").fetchall()}
    shadowed = ", ".join(c for c in ("sweep", "arm", "seed", "lr") if c in runs_columns)
    return (  # a run written without an arm still belongs to its sweep: it gets the arm '(none)'
        f"SELECT c.sweep, coalesce(c.arm, '(none)') AS arm, c.lr, c.seed, c.trial, c.confirms, c.arm_values, "
        f"r.* EXCLUDE ({shadowed}) "
        f"FROM sweep_cells c JOIN runs r USING (run_id) WHERE c.sweep = {quote_literal(sweep)}"
    )


@dataclass(frozen=True)
class SweepInfo:
    """What a sweep asked and how far it got."""

    name: str
    question: str | None
    baseline: str | None
    axes: list[str] = field(default_factory=list)
    n_cells: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # cells by status, as the `sweeps` view counts them
    resumable: int = 0  # waiting cells that were interrupted or crashed (to be resumed)
    runner: bool | None = None  # whether the sweep's runner is known to be alive (None: not known)
    damage: tuple[tuple[str, str], ...] = ()  # (path, what is wrong) of each damaged file of its runs (`store_damage`)
    seeding: dict | None = None  # how seeds were added after the plan (sweep.json's `seeding`; None: fixed in advance)
    primary: str | None = None  # the signal the ablation's question is about (sweep.json's `primary`; None: the loss)

    @property
    def adaptive(self) -> str | None:
        """How the sweep's seeds were added adaptively, as a clause (None: the seed counts were fixed in advance):
        then only the anytime-valid test's decisions hold."""
        if not self.seeding:
            return None
        rounds = len(self.seeding.get("rounds", []))
        return f"seeds were added adaptively by --until-decided ({rounds} round{'s' if rounds != 1 else ''})"

    @property
    def n_done(self) -> int:
        """Cells neither waiting, running, failed nor damaged."""
        return self.n_cells - sum(self.counts.get(status, 0) for status in (*UNFINISHED, "failed", DAMAGED))

    @property
    def running(self) -> bool:
        """Any cell still waiting or running."""
        return any(self.counts.get(status, 0) for status in UNFINISHED)

    @property
    def state(self) -> str:
        """'finished' (nothing waits or runs); 'running' while a cell trains, or the runner is known to be alive,
        or cells are merely pending (a worker may be between cells); 'interrupted' when cells wait, none trains,
        and a stop left some interrupted or crashed, or the runner is known to have ended."""
        if not self.running:
            return FINISHED_STATE
        if self.counts.get("running") or self.runner:
            return RUNNING_STATE
        return INTERRUPTED_STATE if self.runner is False or self.resumable else RUNNING_STATE

    def with_runner(self, alive: bool | None) -> "SweepInfo":
        """This progress, with what is known of the runner."""
        return replace(self, runner=alive)

    def progress(self) -> str:
        """'12 of 24 cells; partial' while running, '24 of 24 cells' (plus failures) when done."""
        text = f"{self.n_done} of {self.n_cells} cells"
        lost = [f"{self.counts[status]} {status}" for status in ("failed", DAMAGED) if self.counts.get(status)]
        if lost:
            text += f" ({', '.join(lost)})"
        return text + ("; partial" if self.running else "")

    def damage_error(self) -> StoreDamage:
        """Why this sweep cannot be analysed: its runs' damaged files, first ones named."""
        shown = "; ".join(f"{path} ({problem})" for path, problem in self.damage[:3])
        shown += f"; and {len(self.damage) - 3} more" if len(self.damage) > 3 else ""
        runs = self.counts.get(DAMAGED, 0)
        return StoreDamage(
            f"sweep {self.name!r} has {runs} damaged run{'s' if runs != 1 else ''}, which cannot be trusted, so any "
            f"answer would silently leave them out: {shown}. `harness db check --repair` moves them aside, and the "
            f"next `harness sweep` of {self.name!r} trains them again.", tuple(path for path, _ in self.damage))


def _damage_lines(con, where: str, sweep: str) -> list[tuple[str, str]]:
    return con.execute(f"SELECT path, problem FROM store_damage WHERE {where} ORDER BY path", [sweep]).fetchall()


def sweep_info(con, sweep: str) -> SweepInfo:
    """The sweep's question, baseline, axes, cell counts and damaged files; AnalysisError naming the closest sweep
    when unknown, StoreDamage when its plan is damaged."""
    unreadable = _damage_lines(con, "sweep = ?", sweep)
    if unreadable:
        path, problem = unreadable[0]
        raise StoreDamage(f"sweep {sweep!r} cannot be read: {path} is damaged ({problem}); {PLAN_REPAIR}.", (path,))
    result = con.execute("SELECT * FROM sweeps WHERE sweep = ?", [sweep])
    found = result.fetchone()
    if found is None:
        names = [row[0] for row in con.execute("SELECT sweep FROM sweeps").fetchall()]
        hint = closest(sweep, names)
        known = f"did you mean {hint!r}?" if hint else f"known sweeps: {', '.join(map(repr, names)) or 'none'}."
        raise AnalysisError(f"no sweep named {sweep!r} in the results store; {known}")
    row = dict(zip([column[0] for column in result.description], found))
    counts = {name: value for name, value in row.items() if name not in NOT_COUNTS}
    axes = json.loads(row["axes"]) if row["axes"] else []
    resumable = con.execute(f"SELECT count(*) FROM sweep_cells WHERE sweep = ? AND status IN {RESUMABLE}",
                            [sweep]).fetchone()[0]
    damage = _damage_lines(con, "run_id IN (SELECT run_id FROM sweep_cells WHERE sweep = ?)", sweep)
    return SweepInfo(sweep, row["question"], row["baseline"], axes, row["n_cells"], counts, resumable,
                     damage=tuple(damage))


@dataclass
class SweepSource:
    """One sweep on its own DuckDB connection, its runs materialized once as the temporary table `sweep_runs`.

    Queries run over that table (so the `runs` view is evaluated once, not once per query); their text for
    display is `sql(body)`, `WITH sweep_runs AS (<members>) <body>`, which gives the same rows in
    `harness db query`.
    """

    con: duckdb.DuckDBPyConnection
    info: SweepInfo
    members: str  # the SELECT behind `sweep_runs`
    results_dir: str | os.PathLike | None  # where the store is (to name a shard a query found damaged)

    def sql(self, body: str) -> str:
        """The full, runnable text of a query over `sweep_runs`."""
        return f"WITH sweep_runs AS ({self.members})\n{body.strip()}"

    def checked(self, query: Callable[[], T]) -> T:
        """`query()` on `self.con`; a shard whose footer was fine and whose pages do not decode (found only when a
        query reads them) is StoreDamage naming it if it is one of this sweep's runs', else the sweep is opened
        again without it and the query run once more (DuckDB scans every shard of a table, other sweeps' too)."""
        import duckdb

        from db.recover import damaged_after, pages_damage

        try:
            return query()
        except duckdb.Error as err:
            damaged = damaged_after(self.results_dir, err)
            if not damaged:
                raise
            ours = {run_id for (run_id,) in self.con.execute("SELECT run_id FROM sweep_runs").fetchall()}
            mine = [path for path in damaged if os.path.basename(os.path.dirname(os.path.dirname(path))) in ours]
            if mine:
                raise pages_damage(mine) from None
        self.con = open_sweep(self.results_dir, self.info.name).con  # the damaged shards are left out now
        return query()

    def rows(self, body: str) -> list[tuple]:
        """The query's rows, run over the materialized `sweep_runs`."""
        return self.checked(lambda: self.con.execute(body).fetchall())

    def column_types(self) -> dict[str, str]:
        """Column name → DuckDB type of `sweep_runs`."""
        return {name: kind for name, kind, *_ in self.rows("DESCRIBE sweep_runs")}

    @property
    def arms(self) -> list[str]:
        """The arms that have a run, by name."""
        return [arm for (arm,) in self.rows("SELECT DISTINCT arm FROM sweep_runs ORDER BY arm")]

    @cached_property
    def labels(self) -> dict[str, str]:
        """arm → its display label, for the arms the plan labels (`sweep_cells.arm_label`)."""
        return dict(self.rows(
            f"SELECT arm, any_value(arm_label) FROM sweep_cells WHERE sweep = {quote_literal(self.info.name)} "
            "AND arm_label IS NOT NULL GROUP BY arm"))

    def shown(self, arm: str) -> str:
        """What tables and legends call `arm`: its label, else its name."""
        return self.labels.get(arm, arm)

    @property
    def n_finished_runs(self) -> int:
        """Runs that are results (completed or diverged)."""
        return self.rows(f"SELECT count(*) FROM sweep_runs WHERE status IN {FINISHED}")[0][0]


def _materialized(con, results_dir, sweep: str) -> SweepSource:
    # The runs view aggregates every metric row each time a query names it, and sweep_cells, sweeps and the
    # members query all name it: a temporary table of its rows shadows it for this connection's queries, so
    # it is computed once (were the shadow ignored, the same rows would just be computed again).
    import db

    con.execute("CREATE TEMP TABLE runs AS SELECT * FROM main.runs")
    info = sweep_info(con, sweep)
    meta = db.read_sweep_meta(db.resolve_results_dir(results_dir), sweep) or {}
    info = replace(info, seeding=meta.get("seeding"), primary=meta.get("primary"))
    members = membership_sql(con, sweep)
    con.execute(f"CREATE TEMP TABLE sweep_runs AS {members}")
    return SweepSource(con, info, members, results_dir)


def open_sweep(results_dir: str | os.PathLike | None, sweep: str) -> SweepSource:
    """Connect to the store and materialize `sweep`'s runs; AnalysisError for a missing store or unknown sweep,
    StoreDamage (a ConfigError too) when a file of the sweep is damaged: an answer without it would silently
    differ. Damage elsewhere in the store changes nothing here, and is not mentioned."""
    import db
    from db.recover import run_recovering

    with warnings.catch_warnings():  # every damaged file is in `store_damage`: the sweep's own ones are raised
        warnings.simplefilter("ignore", db.CorruptShardWarning)
        try:
            source = run_recovering(results_dir, lambda con: _materialized(con, results_dir, sweep))
        except db.StoreDamage:
            raise
        except db.DbError as err:
            raise AnalysisError(str(err)) from err
    if source.info.damage:
        raise source.info.damage_error()
    return source
