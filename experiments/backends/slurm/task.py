"""What runs in each task of the SLURM backend's job array: one sweep worker (the claim loop of
`experiments.workers.worker`, in this process), checkpointable through submitit.

An array element holds G GPUs and runs one SLURM task per worker (`Layout.per_element(G)`): task i takes the
slot `worker_slots(visible GPUs, None, K, N)[i]`, the rule local workers follow: K workers per GPU, or N GPUs
for a worker whose cells train on N devices (its N - 1 helper processes run inside its task, experiments/
workers/ranks.py); an element without GPUs runs K workers on its CPUs. SLURM signals every task of an element
at once; each stops its cell at the next step with a checkpoint. On submitit's signal (USR2: the time limit is
near, or a preemption) task 0 then waits for its siblings to release their cells and lets submitit requeue the
element; the requeued tasks read the plan and each cell's current checkpoint from the results directory, since
nothing but the results path, the sweep name and options is pickled. SIGTERM (scancel, a preemption SLURM
requeues by itself) stops the same way, without a requeue of ours.

No process needs to stay on the submitting machine: the first task of the array's first element keeps the
report current while it runs (experiments.workers.keeper), and a task whose worker found no cell left closes
the finished sweep (experiments.workers.closing: compaction and the report's last page, once).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import submitit

from experiments.backends.devices import capped_threads, usable_cores, visible_gpus, worker_env, worker_slots
from experiments.backends.layout import Layout
from experiments.backends.slurm.logs import slurm_dir, worker_name

RELEASE_WAIT = 60.0  # seconds task 0 waits for its siblings' checkpoints; submitit signals 90 s before the limit


def _task_cpus() -> int:
    """CPUs of this task: --cpus-per-task, else an even share of what the element's tasks may run on."""
    if os.environ.get("SLURM_CPUS_PER_TASK"):
        return int(os.environ["SLURM_CPUS_PER_TASK"])
    return max(1, usable_cores() // int(os.environ.get("SLURM_NTASKS", "1")))


class SweepTask(submitit.helpers.Checkpointable):
    """The callable submitit pickles: a results directory, a sweep name and options, nothing else."""

    def __init__(self, results_dir: Path, sweep: str, *, layout: Layout, retries: int, stale_after: float,
                 worker_args: tuple[str, ...] = (), report: tuple[str, ...] | None = None) -> None:
        self.results_dir, self.sweep, self.layout = str(results_dir), sweep, layout
        self.retries, self.stale_after = retries, stale_after
        self.worker_args, self.report = tuple(worker_args), report

    def __call__(self) -> int:
        """Run one worker until no cell is left (0, then close the sweep if it is finished), or stop it on a
        signal and, for submitit's, requeue."""
        env = submitit.JobEnvironment()
        name = worker_name(env.job_id, env.global_rank)
        gpus = visible_gpus()
        layout = self.layout
        slot = (worker_slots(gpus, None, layout.workers_per_device, layout.devices_per_cell)[env.local_rank] if gpus
                else "cpu")
        # Before torch and Lightning are imported: they read these once. RANK=0: each task is an independent
        # run, but Lightning takes its rank-zero-only rank from SLURM_PROCID at import, and on rank 1 its
        # loggers (the results store's writer among them) would drop everything the task trains.
        os.environ.update(worker_env(slot, self._threads()), RANK="0")

        from experiments.workers.worker import import_training

        import_training()  # torch and Lightning (lean: harness.train.lightning_import): this process is the worker
        from harness.train.interrupt import request_stop
        from harness.train.run import SLURM_BACKEND_ENV

        os.environ[SLURM_BACKEND_ENV] = "1"
        requeue = signal.getsignal(signal.SIGUSR2)  # submitit's: checkpoint() this callable, requeue, exit
        signal.signal(signal.SIGUSR2, lambda signum, frame: request_stop(signum))
        keeper = self._keeper(env)
        try:
            code = self._work(name)
        finally:
            self._ended(env).touch()  # this task holds no cell any more
            if keeper is not None:
                keeper.stop()
        if code == 0:
            self._close(name, keeper)
        elif keeper is not None:
            keeper.live.abandon()
        if code == 128 + signal.SIGUSR2 and callable(requeue):
            if env.global_rank == 0:
                self._wait_for_siblings(env)
            requeue(signal.SIGUSR2, None)  # task 0 requeues the element; for the others submitit does nothing
        return code

    def _threads(self) -> int:
        """torch threads of each of the worker's processes: the task's CPUs over its devices per cell."""
        return capped_threads(max(1, _task_cpus() // self.layout.devices_per_cell))

    def _work(self, name: str) -> int:
        from experiments.workers import worker

        return worker.main(["--results", self.results_dir, "--sweep", self.sweep, "--worker", name,
                            "--retries", str(self.retries), "--stale-after", str(self.stale_after),
                            "--threads", str(self._threads()), *self.layout.placement.worker_args(),
                            *self.worker_args])

    def _report(self) -> list[str] | None:
        return None if self.report is None else [sys.executable, *self.report]

    def _keeper(self, env):
        """The report keeper, in the first task of the array's first element only (None elsewhere)."""
        first = env.global_rank == 0 and os.environ.get("SLURM_ARRAY_TASK_ID", "0") == "0"
        if self.report is None or not first:
            return None
        from experiments.workers.keeper import ReportKeeper

        return ReportKeeper(Path(self.results_dir), self.sweep, self._report(), retries=self.retries,
                            stale_after=self.stale_after).start()

    def _close(self, name: str, keeper) -> None:
        """Compact the store and draw the report's last page if the sweep is finished and nobody did (once)."""
        from experiments.workers.closing import Closing, close_sweep

        outcome = close_sweep(Path(self.results_dir), self.sweep, retries=self.retries, stale_after=self.stale_after,
                              report=self._report(), closer=name, live=None if keeper is None else keeper.live)
        if keeper is not None and outcome is not Closing.CLOSED:
            keeper.live.abandon()  # the closer draws the last page, after compacting
        print(f"{time.strftime('%H:%M:%S')} {name}: closing the sweep: {outcome.value}", flush=True)

    def _ended(self, env, rank: int | None = None) -> Path:
        """The file a task touches when its worker has returned (its cell checkpointed and released, or no
        cell left for it); one per start of the element."""
        restart = os.environ.get("SLURM_RESTART_COUNT", "0")
        rank = env.global_rank if rank is None else rank
        return slurm_dir(self.results_dir) / f"{env.job_id}_{rank}.ended-{restart}"

    def _wait_for_siblings(self, env) -> None:
        """Until every task of this element has ended (submitit's requeue ends them all at once), at most
        RELEASE_WAIT seconds: a sibling that cannot stop in time resumes from its last periodic checkpoint."""
        deadline = time.monotonic() + RELEASE_WAIT
        while time.monotonic() < deadline:
            if all(self._ended(env, rank).exists() for rank in range(env.num_tasks)):
                return
            time.sleep(0.2)
