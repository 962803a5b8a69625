"""A sweep worker: a long-lived process that pays for torch, Lightning and data preparation once, then
claims cell after cell of a sweep's stored plan and trains it, until no cell needs work. A search's trials
are asked from its studies; a done study's confirmation cells (`Ablation(confirm_seeds=N)`) join the plan's
cells and are claimed and trained exactly like them.

A diverged cell is finished. A cell whose previous worker died resumes from its last checkpoint (or
starts again at step 0 as a new segment). A cell that raised is retried until it failed `retries + 1`
times. A cell whose claim this worker lost (it stalled past `--stale-after` and another worker took the
cell over) gets nothing more from it, not even a failure record: it logs one line and goes on with the next
cell. SIGINT/SIGTERM stop the cell in flight at its next step with a checkpoint (status `interrupted`)
and end the worker with exit code 128 + signal. Run as `python -m experiments.workers.worker --results DIR --sweep NAME`;
`--standby` alone (the local runner's, experiments.backends.local_workers) imports first, then reads those
arguments on stdin.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import socket
import sys
import time
import traceback
from pathlib import Path

import db
from db.outcomes import SupersededError, fence_earlier_claims
from experiments.plan.cell import Cell
from experiments.workers.claims import HEARTBEAT_EVERY, BeatWatcher, Claim, Heartbeat, check_stale_after, try_claim
from experiments.search.trials import RETRY_OF, cell_number
from experiments.workers.progress import DEFAULT_STALE_AFTER
from harness.train.checkpoints import KEEP_CHECKPOINTS
from harness.train.placement import SINGLE_DEVICE, Placement

POLL_EVERY = 1.0
POLL_FLOOR = 0.1  # seconds between looks at a few cells others hold: the last one's end is the sweep's end
LOST = "lost"  # what `_train` returns for a cell whose claim this worker lost


def _log(worker: str, message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {worker}: {message}", flush=True)


class _StepReporter:
    """A Lightning logger that only tells the heartbeat which step the cell is at (built lazily: Lightning)."""

    @staticmethod
    def make(heartbeat: Heartbeat):
        from lightning.pytorch.loggers import Logger

        class StepReporter(Logger):
            name = "heartbeat"
            version = "0"

            def log_metrics(self, metrics, step=None) -> None:
                heartbeat.step = step

            def log_hyperparams(self, *args, **kwargs) -> None:
                pass

        return StepReporter()


class PlannedCell:
    """A plan row that becomes its `Cell` (configs validated, parameters counted: about 0.3 ms a cell) when
    more than its run id is first asked for: a worker starting on a 10,800-cell plan trains few of them."""

    def __init__(self, row: dict) -> None:
        self.run_id, self._row, self._cell = row["run_id"], row, None

    def __getattr__(self, name: str):
        if self._cell is None:
            self._cell = Cell.from_plan_row(self._row)
        return getattr(self._cell, name)


class Worker:
    """The claim loop over one sweep's plan. With a multi-device `placement` it is rank 0 of every cell it trains
    and `ranks` (experiments.workers.ranks.CellRanks) are its helper processes."""

    def __init__(self, results_dir: Path, sweep: str, name: str, retries: int, stale_after: float,
                 optuna_storage: str | None = None, heartbeat_every: float = HEARTBEAT_EVERY,
                 placement: Placement = SINGLE_DEVICE, keep_checkpoints: str = "last") -> None:
        check_stale_after(stale_after, heartbeat_every)
        self.results_dir, self.sweep, self.name = Path(results_dir), sweep, name
        self.retries, self.stale_after, self.heartbeat_every = retries, stale_after, heartbeat_every
        self.placement, self.ranks, self.keep_checkpoints = placement, None, keep_checkpoints
        self.watcher = BeatWatcher(stale_after)
        self.cells = [PlannedCell(row) for row in db.read_plan(results_dir, sweep).to_pylist()]
        self.searches = self._searches(optuna_storage)
        self._finished: set[str] = set()
        self._confirming: set[int] = set()  # studies whose confirmation cells joined `self.cells`
        self._prepared: dict[tuple[str, int], object] = {}
        self.stopped_by: int | None = None  # the signal that stopped a search trial

    def _searches(self, optuna_storage: str | None) -> list:
        """A StudyRunner per study of the sweep (none for a plain grid)."""
        from experiments.search.study import Study

        records = json.loads((db.sweep_dir(self.results_dir, self.sweep) / "sweep.json").read_text()).get("studies") or []
        if not records:
            return []
        from experiments.search.runner import StudyRunner, default_storage, storage

        store = storage(optuna_storage or default_storage(self.results_dir), self.retries, self.stale_after)
        return [StudyRunner(self.results_dir, self.sweep, Study.from_record(r), store, self.name) for r in records]

    def _needs_work(self, cell: Cell) -> bool:
        if cell.run_id in self._finished:
            return False
        state = db.run_state(self.results_dir, cell.run_id)
        if state.result is not None or state.failures > self.retries:
            self._finished.add(cell.run_id)
            return False
        return True

    def _data(self, cell: Cell):
        from harness.data import prepare

        key = (cell.data.content_hash(), cell.model.vocab_size)
        if key not in self._prepared:
            self._prepared[key] = prepare(cell.data, cell.model.vocab_size)
        return self._prepared[key]

    def _claim(self, cell: Cell) -> Claim | None:
        """Claim the cell; a claim taken over fences the earlier generations in the store at once, so a stalled
        holder's status is refused from now on (db/outcomes.py), not only once this worker opens its segment."""
        claim = try_claim(self.results_dir, cell.run_id, worker=self.name, sweep=self.sweep, watcher=self.watcher)
        if claim is not None and claim.generation > 0:
            fence_earlier_claims(self.results_dir, cell.run_id, claim.generation)
        return claim

    def _train(self, cell: Cell, claim: Claim, callbacks=(), also=None):
        """Train the claimed cell; returns the outcome, None when it raised (stored as a failed segment), or
        LOST when the claim was lost (nothing more was written)."""
        from experiments.workers.fence import ClaimFence
        from harness.train.fencing import FenceLost
        from harness.train.run import RunSpec, check_run_inputs, train_run

        with Heartbeat(claim, self.heartbeat_every, cell.train.steps, also) as heartbeat:
            fence = ClaimFence(self.results_dir, claim, heartbeat, self.retries)
            state = db.run_state(self.results_dir, cell.run_id)
            spec = RunSpec(cell.model, cell.train, cell.data, self.results_dir, cell.run_id, resume=state.exists,
                           sweep=self.sweep, arm=cell.arm, keep_checkpoints=self.keep_checkpoints)
            how = "resuming" if state.exists else "starting"
            _log(self.name, f"{how} {cell.label} ({cell.run_id}, claim {claim.generation})")
            try:
                prepared = self._data(cell)
                check_run_inputs(prepared, cell.train, self.placement)
                with self._cell_ranks(cell, state.exists):
                    outcome = train_run(spec, prepared, extra_loggers=[_StepReporter.make(heartbeat)], progress=False,
                                        extra_callbacks=callbacks, fence=fence, placement=self.placement)
            except FenceLost as lost:
                return self._lost(cell, lost)
            except Exception as error:  # a crash of this cell is data about the infrastructure: store it, retry
                return self._record_failure(cell, state, error, fence)
        _log(self.name, f"{cell.label}: {outcome.status} ({fence.checks} fence checks, {1000 * fence.seconds:.1f} ms)")
        return outcome

    def _cell_ranks(self, cell: Cell, resume: bool):
        """The helper processes joined for this cell (a multi-device placement), else nothing to hold."""
        import contextlib

        if self.ranks is None:
            return contextlib.nullcontext()
        return self.ranks.cell(cell.plan_row(), resume, lambda message: _log(self.name, message))

    def _let_go(self, cell: Cell, claim: Claim) -> None:
        """Release a claim on a cell that has a result already; a claim taken over while this worker stalled
        between claiming and looking again is lost, and said so like any other."""
        if not claim.release():
            self._lost(cell, f"claim {claim.generation} was taken over")

    def _lost(self, cell: Cell, lost: BaseException | str) -> str:
        _log(self.name, f"{cell.label}: lost the cell to another worker, {lost}; going on with the next cell")
        return LOST

    def _record_failure(self, cell: Cell, before: db.RunState, error: Exception, fence) -> None | str:
        """Make sure the attempt counts as a failed segment with its traceback, even when it raised before the
        run's writer opened (bad data, a device error at set-up); LOST (nothing recorded) without the claim."""
        from harness.train.fencing import FenceLost

        text = traceback.format_exc()
        _log(self.name, f"{cell.label} raised {type(error).__name__}: {error}\n{text}")
        after = db.run_state(self.results_dir, cell.run_id)
        if after.failures > before.failures:
            return None
        from harness.train.checkpoints import checkpoint_step, last_checkpoint

        ckpt = last_checkpoint(self.results_dir, cell.run_id)
        start = checkpoint_step(ckpt) + 1 if ckpt is not None else 0
        try:
            fence.check("record a failure")
            writer = db.RunWriter.open(self.results_dir, cell.run_id, sweep=self.sweep, arm=cell.arm, seed=cell.seed,
                                       resume=True, resume_from_step=start, claim=fence.generation)
            writer.close("failed", summary={"error": f"{type(error).__name__}: {error}", "traceback": text})
        except (FenceLost, SupersededError) as lost:
            return self._lost(cell, lost)
        return None

    def run(self, helper_args: list[str] = ()) -> int:
        """Claim and train until every cell is finished; 0, or 128 + signal when stopped by one. `helper_args`:
        the options a multi-device placement's helper processes need besides it (results, sweep, threads)."""
        import_training()  # before the first claim, not on its clock (main() has done it already)
        if self.placement.distributed:
            from experiments.workers.ranks import CellRanks

            self.ranks = CellRanks(self.placement, list(helper_args))
        try:
            return self._claim_loop()
        finally:
            if self.ranks is not None:
                self.ranks.close()

    def _claim_loop(self) -> int:
        from harness.train.interrupt import stop_on_signals, stop_requested

        with stop_on_signals():
            while True:
                if stop_requested():
                    return 128 + stop_requested()
                waiting, trained, searched = 0, False, None  # waiting: cells others train (if they die, back to us)
                for cell in self.cells:
                    if not self._needs_work(cell):
                        continue
                    claim = self._claim(cell)
                    if claim is None:
                        waiting += 1
                        continue
                    if not self._needs_work(cell):  # finished between our look and our claim
                        self._let_go(cell, claim)
                        continue
                    outcome = self._train(cell, claim)
                    if outcome not in (None, LOST) and outcome.interrupted is not None:
                        _log(self.name, f"stopped at step {outcome.interrupted.step} of cell {cell.index}")
                        return 128 + outcome.interrupted.signum
                    trained = True
                    break  # back to the top: plan order, and cells freed meanwhile come first
                if not trained:
                    searched = self._search_once()
                    if searched == "stopped":
                        return 128 + self.stopped_by
                    trained = searched in ("trained", "confirming")
                if not trained:
                    if not waiting and searched != "waiting":
                        _log(self.name, "no cell left")
                        return 0
                    time.sleep(POLL_EVERY if searched == "waiting" else poll_interval(waiting))

    def _search_once(self) -> str:
        """Run one trial of the first study that has room: 'trained', 'confirming' (a done study's confirmation
        cells joined the claimed cells, which the claim loop trains like plan cells), 'waiting' (others hold the
        rest), 'stopped' (a signal stopped the trial) or 'idle' (every study is done)."""
        from experiments.search.pruning import PruneOnValidation

        waiting = False
        for runner in self.searches:
            state = runner.state()
            if state == "done" and runner.study.index not in self._confirming:
                self._confirming.add(runner.study.index)
                confirmations = runner.confirmations()
                if confirmations:
                    self.cells.extend(confirmations)
                    return "confirming"
            if state != "open":
                waiting = waiting or state == "busy"
                continue
            trial = runner.ask()
            if trial is None:
                waiting = True
                continue
            number = cell_number(runner.frozen(trial))
            cell = runner.study.cell(trial.params, number, trial=number)
            runner.record(cell)
            outcome = self._train_trial(runner, trial, cell, PruneOnValidation(trial))
            if outcome == "stopped":
                return "stopped"
            return "trained"
        return "waiting" if waiting else "idle"

    def _train_trial(self, runner, trial, cell: Cell, pruning) -> str:
        """Train (or adopt, when identical configs already ran) one trial and tell the study its value."""
        label = f"trial {trial.number} of {runner.study.name(self.sweep)} {trial.params}"
        while True:
            if db.run_state(self.results_dir, cell.run_id).result is not None:
                if not _finished(runner, trial):  # a trial failed as stale while we stalled is the study's past
                    runner.tell(trial, None, cell.run_id)  # these exact configs already ran: reuse the result
                return "told"
            claim = self._claim(cell)
            if claim is None:
                runner.heartbeat(trial)
                time.sleep(POLL_EVERY)  # the same configs are training elsewhere: wait for their result
                continue
            if db.run_state(self.results_dir, cell.run_id).result is not None:  # finished between look and claim
                self._let_go(cell, claim)
                continue
            outcome = self._train(cell, claim, callbacks=[pruning], also=lambda: runner.heartbeat(trial))
            if outcome != LOST:
                break  # LOST: the worker that took the cell over finishes it; its result is this trial's value
        if outcome is not None and outcome.interrupted is not None:
            self.stopped_by = outcome.interrupted.signum
            return "stopped"  # the trial stays RUNNING; its heartbeat stops, so it is failed and re-queued
        runner.tell(trial, None if outcome is None else outcome.status, cell.run_id)
        if outcome is None and db.run_state(self.results_dir, cell.run_id).failures <= self.retries:
            runner.optuna_study.enqueue_trial(trial.params, user_attrs={RETRY_OF: cell.trial})  # raised: the same configs again
        _log(self.name, f"{label}: told")
        return "told"


def poll_interval(waiting: int) -> float:
    """Seconds before a worker with nothing to train looks again at the `waiting` cells others hold: soon when
    few are left (at a sweep's end its last exit waits on this look), at most POLL_EVERY; either way a worker
    reads at most about ten claims a second."""
    return min(POLL_EVERY, POLL_FLOOR * max(1, waiting))


def _finished(runner, trial) -> bool:
    """Whether the study already closed the trial (failed as stale while its worker was stalled)."""
    return runner.frozen(trial).state.is_finished()



def import_training(threads: int | None = None) -> None:
    """torch, Lightning (without what only torchmetrics would use: harness.train.lightning_import) and the
    training code: the seconds a worker spends before it can train."""
    from harness.train.lightning_import import import_lightning

    import_lightning()
    import harness.train.run  # noqa: F401

    if threads:
        import torch

        torch.set_num_threads(threads)


def await_command() -> list[str] | None:
    """On standby (experiments.backends.local_workers): wait for the runner's line on stdin, {"argv": [...],
    "log": path}, move stdout and stderr from the runner's temp file to that log (what was printed so far
    first) and return the arguments. None: the input ended first (the launch ended), nothing was touched."""
    line = sys.stdin.readline()
    if not line.strip():
        return None
    given = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    os.lseek(1, 0, os.SEEK_SET)  # stdout and stderr share the temp file and its offset
    printed = b"".join(iter(lambda: os.read(1, 1 << 16), b""))
    fd = os.open(given["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(fd, printed)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    return given["argv"]


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m experiments.workers.worker", description="Train cells of a stored sweep plan.",
                                     epilog="`--standby` alone: import first, then read these arguments on stdin (as the "
                                     "local runner starts its workers).")
    parser.add_argument("--results", required=True, type=Path)
    parser.add_argument("--sweep", required=True)
    parser.add_argument("--worker", default=f"{socket.gethostname()}-{os.getpid()}")
    parser.add_argument("--retries", type=int, default=1)
    parser.add_argument("--stale-after", type=float, default=DEFAULT_STALE_AFTER)
    parser.add_argument("--heartbeat-every", type=float, default=HEARTBEAT_EVERY)
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--optuna-storage", help="SQLAlchemy URL of the searches' Optuna storage (default: SQLite in the results dir)")
    parser.add_argument("--devices-per-cell", type=int, default=1, help="devices (processes) each cell trains on")
    parser.add_argument("--strategy", default="ddp", help="ddp or fsdp, for cells on several devices")
    parser.add_argument("--keep-checkpoints", choices=KEEP_CHECKPOINTS, default="last",
                        help="checkpoints a cell keeps (harness.train.checkpointing)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--standby"]:
        import_training()
        argv = await_command()
        if argv is None:
            return 0
    args = parser().parse_args(argv)
    import_training(args.threads)
    helper_args = ["--results", str(args.results), "--sweep", args.sweep,
                   *(["--threads", str(args.threads)] if args.threads else [])]
    return Worker(args.results, args.sweep, args.worker, args.retries, args.stale_after, args.optuna_storage,
                  args.heartbeat_every, Placement(args.devices_per_cell, args.strategy), args.keep_checkpoints).run(helper_args)


def exit_now(code: int) -> None:
    """End the process without the interpreter's teardown of torch and Lightning (2-3 s of CPU on the 2-core
    VM, and the last worker's teardown is on the sweep's closing path): by now every run writer is closed and
    every claim released; the atexit handlers still run and the output is flushed."""
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
