"""The SLURM backend: a stored sweep plan runs as a submitit job array whose tasks run the claim loop
(`experiments.backends.slurm.task`). Submitting returns the job ids; progress is read from the results store, never
from SLURM's accounting (which may be off). See docs/cluster.md.

    from experiments import Layout, SlurmLauncher, SlurmResources
    launcher = SlurmLauncher("results", "qk-stability", layout=Layout(workers=32, workers_per_device=4),
                             resources=SlurmResources(partition="gpu", gpus_per_element=1, time="4:00:00"))
    launcher.check()              # sbatch present, partition known, sbatch would take it: a ConfigError otherwise
    jobs = launcher.submit()      # the plan must be stored (`harness sweep --backend slurm` does both)
    launcher.follow(jobs)         # the live display until every cell is finished, then the closing
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

from errors import ConfigError
from experiments.backends.layout import Layout
from experiments.backends.slurm.logs import failed_cell_log, record_jobs, recorded_jobs, slurm_dir
from experiments.backends.slurm.resources import SlurmResources, parse_time  # noqa: F401  parse_time: the API
from experiments.workers.options import DEFAULT_STALE_AFTER

# Time-limit requeues allowed per element (preemptions do not count): a sweep longer than --time is meant to
# run as a chain of short allocations; the chain ends by itself when no cell is left.
MAX_TIMEOUT_REQUEUES = 1000
FOLLOW_EVERY = 1.0
QUEUE_EVERY = 10.0  # squeue is asked this rarely: a cluster's controller serves everyone


class SlurmLauncher:
    """Submit a stored sweep plan as a job array: `layout`'s workers, `layout.per_element(G)` to an array element
    holding `resources` (G = its GPUs), each element one allocation on one node. `worker_args` go to every worker;
    `report`: the arguments after the interpreter of the report process (`-m analysis.report.live …`), which the
    array keeps running while it trains and whose last page its closer draws; None for no report."""

    def __init__(self, results_dir: Path, sweep: str, *, layout: Layout = Layout(),
                 resources: SlurmResources = SlurmResources(), retries: int = 1,
                 stale_after: float = DEFAULT_STALE_AFTER, worker_args: Sequence[str] = (),
                 report: Sequence[str] | None = None) -> None:
        self.results_dir, self.sweep, self.layout, self.resources = Path(results_dir), sweep, layout, resources
        self.elements = layout.elements(resources.gpus_per_element)  # ConfigError: a layout an element cannot hold
        self.retries, self.stale_after, self.worker_args = retries, stale_after, tuple(worker_args)
        self.report = None if report is None else tuple(report)

    @property
    def workers_per_element(self) -> int:
        """Workers (SLURM tasks) in one array element."""
        return self.layout.per_element(self.resources.gpus_per_element)

    def check(self) -> None:
        """What SLURM can refuse, asked before anything is written or submitted: sbatch is on PATH, the
        partition exists (in SLURM's words when it does not) and sbatch would take the array."""
        for tool in ("sbatch", "srun", "scontrol"):
            if shutil.which(tool) is None:
                raise ConfigError(f"--backend slurm needs SLURM's {tool} on PATH; it is not there (is this a SLURM "
                                  "login node? `module load slurm`?).")
        partition = self.resources.partition
        if partition is not None:
            answer = subprocess.run(["scontrol", "show", "partition", "-o", partition], capture_output=True,
                                    text=True, timeout=60)
            if answer.returncode != 0 or not answer.stdout.strip():
                said = (answer.stdout + answer.stderr).strip().splitlines()
                raise ConfigError(_unreachable(said) or f"--partition {partition}: SLURM says "
                                  f"{said[0] if said else 'no such partition'!r}; partitions here: "
                                  f"{', '.join(_partitions()) or 'none listed'}.")
        self.test_submission()

    def parameters(self) -> dict:
        """The array's resources in submitit's words (no sbatch text of ours)."""
        return self.resources.parameters(self.layout, f"harness-{self.sweep}")

    def executor(self):
        """The submitit executor with this launcher's resources and interpreter."""
        import submitit

        executor = submitit.SlurmExecutor(folder=slurm_dir(self.results_dir), max_num_timeout=MAX_TIMEOUT_REQUEUES,
                                          python=self.resources.python_command(sys.executable))
        executor.update_parameters(**self.parameters())
        return executor

    def test_submission(self) -> None:
        """Ask sbatch whether it would take this array (`sbatch --test-only` on the script submitit would write,
        in a temporary folder), so a request SLURM refuses fails before anything is written or left in slurm/."""
        import tempfile

        from submitit.slurm.slurm import _make_sbatch_string

        with tempfile.TemporaryDirectory() as folder:
            script = Path(folder) / "test.sh"
            script.write_text(_make_sbatch_string(command="true", folder=folder, map_count=self.elements,
                                                  **self.parameters()))
            answer = subprocess.run(["sbatch", "--test-only", str(script)], capture_output=True, text=True, timeout=60)
        if answer.returncode != 0:
            said = [line.strip() for line in (answer.stderr + answer.stdout).splitlines()
                    # not sbatch's "Try sbatch --help" after the reason
                    if line.strip() and not line.startswith("Try ")]
            raise ConfigError(_unreachable(said)
                              or f"sbatch refused the job: {said[-1] if said else 'no reason given'}")

    def submit(self) -> list[str]:
        """Submit the array; its job ids (`ID_I` per element, or `ID` for one), also recorded for --follow."""
        from submitit.core.utils import FailedJobError, FailedSubmissionError

        from experiments.backends.slurm.task import SweepTask

        task = SweepTask(self.results_dir, self.sweep, layout=self.layout, retries=self.retries,
                         stale_after=self.stale_after, worker_args=self.worker_args, report=self.report)
        executor = self.executor()
        folder = slurm_dir(self.results_dir)
        before = set(os.listdir(folder)) if folder.is_dir() else set()
        try:
            with executor.batch():  # one array of identical elements: SLURM's environment tells them apart
                jobs = [executor.submit(task) for _ in range(self.elements)]
        except (FailedJobError, FailedSubmissionError) as error:
            for name in set(os.listdir(folder)) - before:  # the refused submission's script and pickles
                (folder / name).unlink(missing_ok=True)
            lines = [line.strip() for line in str(error).splitlines() if "error" in line.lower()]
            raise ConfigError(f"sbatch refused the job: {lines[-1] if lines else str(error).strip()}") from None
        job_ids = [job.job_id for job in jobs]
        record_jobs(self.results_dir, self.sweep, job_ids)
        return job_ids

    def follow(self, job_ids: Sequence[str] | None = None, progress: bool = True) -> int:
        """Show the live display until every cell is finished, then close the sweep (compaction and the report's
        last page, unless the array's closer did; exit 0, or 1 when some failed), or until the jobs (default: every
        job submitted for the sweep from this results directory) left the queue with cells unfinished (3, naming
        them). Ctrl-C stops following only; the jobs keep running."""
        from experiments.backends.local import LiveDisplay
        from experiments.workers.progress import ProgressReader, exit_code, left_lines, render

        job_ids = list(job_ids or recorded_jobs(self.results_dir, self.sweep))
        reader = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after)
        display, started, asked = LiveDisplay(progress), time.monotonic(), 0.0
        try:
            while (state := reader.read()).done < state.total:
                display.show(render(self.sweep, state, time.monotonic() - started))
                if time.monotonic() - asked > QUEUE_EVERY:
                    asked = time.monotonic()
                    if not queued(job_ids):
                        state = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after).read()
                        if state.done == state.total:
                            break  # the last cell finished between the read above and the queue's answer
                        print(f"sweep {self.sweep}: no job of it is queued ({_array_ids(job_ids) or 'none recorded'}), "
                              f"{state.total - state.done} cells unfinished; logs under {slurm_dir(self.results_dir)}/",
                              file=sys.stderr)
                        print("\n".join(left_lines(state)), file=sys.stderr)
                        return exit_code(state)
                time.sleep(FOLLOW_EVERY)
            display.show(render(self.sweep, state, time.monotonic() - started))
            return self._close()
        except KeyboardInterrupt:
            print(f"\nstopped following; the jobs keep running (cancel: scancel {_array_ids(job_ids)})",
                  file=sys.stderr)
            return 130

    def _close(self) -> int:
        """Close the finished sweep (or wait while the array's closer does), then say how it ended."""
        import socket

        from experiments.workers.closing import Closing, close_sweep, closing_error
        from experiments.workers.progress import ProgressReader, exit_code

        report = None if self.report is None else [sys.executable, *self.report]
        closer = f"follow-{socket.gethostname()}-{os.getpid()}"
        while close_sweep(self.results_dir, self.sweep, retries=self.retries, stale_after=self.stale_after,
                          report=report, closer=closer) is Closing.BUSY:
            time.sleep(FOLLOW_EVERY)
        if (error := closing_error(self.results_dir, self.sweep)) is not None:
            print(f"sweep {self.sweep}: the report could not be written: {error}", file=sys.stderr)
        state = ProgressReader(self.results_dir, self.sweep, self.retries, self.stale_after).read()  # the truth now
        for cell in state.failed_cells:
            print(f"  failed: cell {cell.index} {cell.label} ({cell.run_id}); log "
                  f"{failed_cell_log(self.results_dir, cell.run_id)}",
                  file=sys.stderr)
        return exit_code(state)


def _array_ids(job_ids: Sequence[str]) -> str:
    return " ".join(sorted({job_id.split("_")[0] for job_id in job_ids}))


def queued(job_ids: Sequence[str]) -> bool:
    """Whether any of the jobs is still pending or running (squeue; a job SLURM forgot is not)."""
    if not job_ids:
        return False
    answer = subprocess.run(["squeue", "-h", "-o", "%i", "-j", ",".join(sorted({j.split("_")[0] for j in job_ids}))],
                            capture_output=True, text=True, timeout=60)
    return answer.returncode == 0 and bool(answer.stdout.strip())


def _unreachable(said: Sequence[str]) -> str | None:
    """The error for a controller SLURM's tools cannot reach (not the request's fault), or None."""
    cause = next((line for line in said
                  if "contact slurm controller" in line.lower() or "connection refused" in line.lower()), None)
    if cause is None:
        return None
    return (f"SLURM's controller cannot be reached ({cause}); is slurmctld running, and does SLURM_CONF point at "
            "this cluster's slurm.conf?")


def _partitions() -> list[str]:
    answer = subprocess.run(["sinfo", "-h", "-o", "%R"], capture_output=True, text=True, timeout=60)
    return sorted(set(answer.stdout.split())) if answer.returncode == 0 else []
